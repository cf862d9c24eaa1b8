package main

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

func newChainImportCommand() *cobra.Command {
	var o cmdutil.ChainOptions
	var from, exportTo, legacyHex, legacyFile, signKey string
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || o.DB == "" {
				return cmdutil.UsageError{Err: errors.New("--from and --into are required")}
			}
			if exportTo == "" {
				exportTo = strings.TrimSuffix(o.DB, ".db") + "-bijotel-export.json"
			}
			secret, err := o.Secret(true)
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			legacySecret := secret
			if legacyHex != "" || legacyFile != "" {
				if legacySecret, err = store.LoadSecret(legacyHex, legacyFile); err != nil {
					return cmdutil.UsageError{Err: fmt.Errorf("legacy secret: %w", err)}
				}
			}
			var key ed25519.PrivateKey
			if signKey != "" {
				if key, err = loadPrivateKey(signKey); err != nil {
					return err
				}
			}
			legacy, err := legacydb.Open(from)
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
				Legacy: legacy, LegacySecret: legacySecret, Into: into, ExportPath: exportTo, SignKey: key,
			})
			if err != nil {
				return err
			}
			return printImport(cmd, res, o.DB, exportTo, time.Since(start))
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the BIJOTEL chain file (its chain.db)")
	cmd.Flags().StringVar(&o.DB, "into", "", "the Cairn chain file to create (or that holds this import already)")
	cmd.Flags().StringVar(&o.SecretHex, "secret-hex", "", "the Cairn chain's HMAC secret in hex (prefer CAIRN_HMAC_SECRET)")
	cmd.Flags().StringVar(&o.SecretFile, "secret-file", "", "file holding the Cairn chain's HMAC secret in hex")
	cmd.Flags().StringVar(&legacyHex, "legacy-secret-hex", "", "the legacy chain's HMAC secret in hex (prefer BIJOTEL_HMAC_SECRET); default: the Cairn secret")
	cmd.Flags().StringVar(&legacyFile, "legacy-secret-file", "", "file holding the legacy chain's HMAC secret in hex")
	cmd.Flags().StringVar(&exportTo, "export-to", "", "where to write the legacy export (default: the --into path with -bijotel-export.json for .db)")
	cmd.Flags().StringVar(&signKey, "sign-key", "", "the legacy operator key (PKCS #8 PEM): write a signed bijotel-chain-v2 export")
	return cmd
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
