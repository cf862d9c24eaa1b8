package chain

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/bijotel/importer"
	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
)

// chainImportOptions are `cairn chain import`'s.
type chainImportOptions struct {
	cmdutil.ChainOptions
	from, exportTo, legacyHex, legacyFile, signKey string
}

func newChainImportCommand() *cobra.Command {
	o := &chainImportOptions{}
	cmd := &cobra.Command{
		Use:   "import --from LEGACY.db --into CHAIN.db",
		Short: "Import a BIJOTEL chain file into a new Cairn chain, behind a bridge record",
		Long: `Import the original product's chain file (BIJOTEL) into a new Cairn chain. The legacy
chain is verified row by row with its HMAC secret (--legacy-secret-hex, BIJOTEL_HMAC_SECRET,
--legacy-secret-file; else the Cairn chain's own secret), and exported in the original's
format to --export-to (bijotel-chain-v1, or a signed v2 with --sign-key, the legacy
operator key). Then the Cairn chain is sealed: entry 1 is a bridge record binding the legacy
chain (its first and last seq, row count, head hmac_hash, the SHA-256 of that export and a
digest of the rows), and entries 2 onward are the legacy rows, their canonical bodies byte
for byte, so every legacy canonical_hash is in the Cairn chain. docs/PROTOCOL.md §2 has the
rules; cairn chain verify checks them.

Importing the same file again changes nothing (a missing export is written again, byte for
byte). A legacy file that changed since is refused with the first legacy seq that differs.
Stop the original's writers first: rows sealed after the import began are not imported.

Exit status: 0 imported (or already), 3 the legacy chain fails verification or changed
since the import, 1 unreadable or refused, 2 bad arguments.`,
		Args: cmdutil.NoArgs,
		Example: `  # Import the original product's chain, writing its legacy export beside the new chain
  CAIRN_HMAC_SECRET=... cairn chain import --from bijotel/chain.db --into chain.db

  # With the legacy chain's own secret and a signed legacy export
  cairn chain import --from bijotel/chain.db --into chain.db --secret-file secret.hex \
    --legacy-secret-file bijotel-secret.hex --sign-key legacy-operator.pem`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the BIJOTEL chain file (its chain.db)")
	cmd.Flags().StringVar(&o.DB, "into", "", "the Cairn chain file to create (or that holds this import already)")
	cmd.Flags().StringVar(&o.SecretHex, "secret-hex", "", "the Cairn chain's HMAC secret in hex (prefer CAIRN_HMAC_SECRET)")
	cmd.Flags().StringVar(&o.SecretFile, "secret-file", "", "file holding the Cairn chain's HMAC secret in hex")
	cmd.Flags().StringVar(&o.legacyHex, "legacy-secret-hex", "", "the legacy chain's HMAC secret in hex (prefer BIJOTEL_HMAC_SECRET); default: the Cairn secret")
	cmd.Flags().StringVar(&o.legacyFile, "legacy-secret-file", "", "file holding the legacy chain's HMAC secret in hex")
	cmd.Flags().StringVar(&o.exportTo, "export-to", "", "where to write the legacy export (default: the --into path with -bijotel-export.json for .db)")
	cmd.Flags().StringVar(&o.signKey, "sign-key", "", "the legacy operator key (PKCS #8 PEM): write a signed bijotel-chain-v2 export")
	return cmd
}

// Complete names the legacy export after --into unless --export-to does.
func (o *chainImportOptions) Complete(*cobra.Command, []string) error {
	if o.exportTo == "" && o.DB != "" {
		o.exportTo = strings.TrimSuffix(o.DB, ".db") + "-bijotel-export.json"
	}
	return nil
}

// Validate requires --from and --into.
func (o *chainImportOptions) Validate() error {
	if o.from == "" || o.DB == "" {
		return cmdutil.UsageError{Err: errors.New("--from and --into are required")}
	}
	return nil
}

// Run imports the legacy chain and prints what it did.
func (o *chainImportOptions) Run(cmd *cobra.Command) error {
	secret, err := o.Secret(true)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	legacySecret := secret
	if o.legacyHex != "" || o.legacyFile != "" {
		if legacySecret, err = store.LoadSecret(o.legacyHex, o.legacyFile); err != nil {
			return cmdutil.UsageError{Err: fmt.Errorf("legacy secret: %w", err)}
		}
	}
	var key ed25519.PrivateKey
	if o.signKey != "" {
		if key, err = cmdutil.LoadPrivateKey(o.signKey); err != nil {
			return err
		}
	}
	legacy, err := legacydb.Open(o.from)
	if err != nil {
		return err
	}
	defer func() { _ = legacy.Close() }()
	into, err := store.Open(o.DB, secret)
	if err != nil {
		return err
	}
	defer func() { _ = into.Close() }()
	start := time.Now()
	res, err := importer.Import(cmd.Context(), importer.Options{
		Legacy: legacy, LegacySecret: legacySecret, Into: into, ExportPath: o.exportTo, SignKey: key,
	})
	if err != nil {
		return err
	}
	return printImport(cmd, res, o.DB, o.exportTo, time.Since(start))
}

// printImport says what the import did and how to check it.
func printImport(cmd *cobra.Command, res *importer.Result, into, exportTo string, took time.Duration) error {
	b := res.Bridge
	var out strings.Builder
	if res.AlreadyImported {
		fmt.Fprintf(&out, "already imported: %s holds legacy seq %d..%d as entries %d..%d; nothing changed\n",
			into, b.LegacyFirstSeq, b.LegacyLastSeq, b.FirstSeq, b.LastSeq)
	} else {
		fmt.Fprintf(&out, "imported %d legacy rows (seq %d..%d) into %s as entries %d..%d, behind bridge entry 1, in %s (%.0f rows/s)\n",
			b.LegacyRows, b.LegacyFirstSeq, b.LegacyLastSeq, into, b.FirstSeq, b.LastSeq, took.Round(time.Millisecond),
			float64(b.LegacyRows)/took.Seconds())
	}
	if res.EnergyRows > 0 {
		fmt.Fprintf(&out, "energy log: %d imported calls with token counts added\n", res.EnergyRows)
	}
	fmt.Fprintf(&out, "legacy head hmac_hash  %s\nlegacy export          %s (sha256 %s)", b.LegacyHeadHMACHash, exportTo, b.LegacyExportSHA256)
	if res.ExportWritten {
		out.WriteString(", written now")
	}
	fmt.Fprintf(&out, "\nbridge hmac_hash       %s\ncheck: cairn chain verify --db %s; cairn verify-export %s (with the legacy secret)\n",
		res.BridgeHMAC, into, exportTo)
	_, err := fmt.Fprint(cmd.OutOrStdout(), out.String())
	return err
}

// printImportCheck says what a verification checked of a chain's imported BIJOTEL rows;
// nothing when the chain imports none.
func printImportCheck(w io.Writer, im *store.ImportReport) error {
	if im == nil {
		return nil
	}
	b := im.Bridge
	columns := "their columns match the bridge record's digest"
	if !im.ColumnsChecked {
		columns = "their columns were NOT checked (the window does not hold every one of them: verify without a window)"
	}
	legacy := "the legacy chain re-derives from them under this secret up to its head"
	if !im.LegacyHMACsRederived {
		legacy = "the legacy chain was not re-derived (sealed with another secret, or not every imported entry checked): " +
			"its export, sha256 " + b.LegacyExportSHA256 + ", verifies it with cairn verify-export and the legacy secret"
	}
	_, err := fmt.Fprintf(w, "import: entries %d..%d are BIJOTEL rows seq %d..%d behind bridge entry 1 (legacy head %s); %s; %s\n",
		b.FirstSeq, b.LastSeq, b.LegacyFirstSeq, b.LegacyLastSeq, b.LegacyHeadHMACHash, columns, legacy)
	return err
}
