package analysis

import (
	"bufio"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// exportOptions are `cairn export`'s.
type exportOptions struct {
	cmdutil.ChainOptions
	signKey, window, output string
	afterSeq                int64
	headerOnly              bool
	// r is the window to export, from --range or --after-seq.
	r cmdutil.SeqRange
}

// NewExportCommand returns `cairn export`.
func NewExportCommand() *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --sign-key KEY.pem --output FILE",
		Short: "Write a signed cairn-chain-v2 export of the chain or a window of it",
		Long: `Write a signed cairn-chain-v2 export (see docs/PROTOCOL.md) of the whole chain, of
--range FROM:TO, or of everything after --after-seq N (the segment after the last federation
submission). The export is streamed; the file appears only once it is complete. The HMAC
secret is required (it signs chain_signature).

A chain imported from BIJOTEL carries its imported rows only behind its bridge record
(entry 1): a window that starts after seq 1 but holds imported rows is refused, since no
verifier would take it; export from seq 1, after the imported rows, or --header-only.`,
		Args: cmdutil.NoArgs,
		Example: `  # Export the whole chain, signed with the operator's key
  cairn export --db chain.db --sign-key private.pem --output chain-export.json

  # Export what the federation needs of the entries after seq 1000
  cairn export --db chain.db --sign-key private.pem --after-seq 1000 --header-only -o segment.json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVar(&o.signKey, "sign-key", "", "operator private key (PKCS #8 PEM, as cairn keygen writes)")
	cmd.Flags().StringVar(&o.window, "range", "", "export only seq FROM:TO (either side may be empty)")
	cmd.Flags().Int64Var(&o.afterSeq, "after-seq", 0, "export the entries after seq N")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "file to write, - for standard output")
	cmd.Flags().BoolVar(&o.headerOnly, "header-only", false, "leave the entries out (what the federation needs)")
	return cmd
}

// Complete reads the window: --range, or the entries after --after-seq.
func (o *exportOptions) Complete(*cobra.Command, []string) error {
	var err error
	if o.r, err = cmdutil.ParseRange(o.window); err != nil {
		return err
	}
	if o.afterSeq > 0 && o.window == "" {
		o.r = cmdutil.SeqRange{From: o.afterSeq + 1}
	}
	return nil
}

// Validate requires the key and the output, and one way to give the window.
func (o *exportOptions) Validate() error {
	switch {
	case o.signKey == "" || o.output == "":
		return cmdutil.UsageError{Err: errors.New("--sign-key and --output are required")}
	case o.afterSeq < 0:
		return cmdutil.UsageError{Err: errors.New("--after-seq must not be negative")}
	case o.afterSeq > 0 && o.window != "":
		return cmdutil.UsageError{Err: errors.New("give --range or --after-seq, not both")}
	}
	return nil
}

// Run writes the signed export.
func (o *exportOptions) Run(cmd *cobra.Command) error {
	keyPEM, err := os.ReadFile(o.signKey)
	if err != nil {
		return fmt.Errorf("read signing key: %w", err)
	}
	key, err := protocol.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return fmt.Errorf("signing key %s: %w", o.signKey, err)
	}
	s, err := o.Open(true)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	bar := cmdutil.NewProgressBar(cmd.ErrOrStderr(), "export")
	h, err := cmdutil.WriteExportFile(cmd, s, o.output, store.ExportOptions{
		From: o.r.From, To: o.r.To, Key: key, ExportedAt: time.Now(), HeaderOnly: o.headerOnly, Progress: bar.ProgressFunc(),
	})
	bar.Done()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.ErrOrStderr(), "exported seq %d..%d (entry_count %d) signed by %s to %s\n",
		h.FirstSeq, h.LastSeq, h.EntryCount, protocol.OperatorID(key.Public().(ed25519.PublicKey)), o.output)
	return err
}

// verifyExportOptions are `cairn verify-export`'s.
type verifyExportOptions struct {
	cmdutil.ChainOptions
	cmdutil.NoValidation
	publicKey string
	asJSON    bool
	// file is the export to verify, - for standard input.
	file string
}

// NewVerifyExportCommand returns `cairn verify-export`.
func NewVerifyExportCommand() *cobra.Command {
	o := &verifyExportOptions{}
	cmd := &cobra.Command{
		Use:   "verify-export FILE",
		Short: "Verify a cairn-chain-v2 or BIJOTEL export with the secret, the public key, or both",
		Long: `Verify an export as a stream (- reads standard input). With the operator's public
key (--public-key) every body hash, link, the Merkle root and the signature are checked and
the signer must be that key; with the HMAC secret (CAIRN_HMAC_SECRET, --secret-hex,
--secret-file) every HMAC and the chain signature too. With neither, the export is checked
for consistency but bound to no key, which is a mismatch.

The first line says "valid:" only when every header member is authenticated (the public
key was given). With the secret alone it says "checks passed, not all authenticated:" and a
"not authenticated:" line names the header members nothing checked: exported_at always, and
for a header-only export (no entries, so no HMAC) also first_seq, first_prev_hash and
entries_root, since chain_signature covers only last_hmac_hash and entry_count.

A BIJOTEL export (format bijotel-chain-v1 or bijotel-chain-v2, from the original
product) is recognised by its format member and checked by that product's rules, stricter
where they are weak. The first line is the verdict: "valid" only with the secret and every
check passed; with the public key alone "signature valid, entries not bound" (the original's
signature covers only chain_signature, so a forged body or a cut tail cannot be seen), exit
3; with neither, "consistent, bound to nothing", exit 3. The file's SHA-256 follows (the
one "cairn chain import" binds), then every check and what no check covers.

--json prints one JSON document instead, whatever the outcome: "valid" (true exactly when
the text form would say valid), "verdict", the range, the checks run and, when it does not
verify, "error"; the exit status is the same.

Exit status: 0 every check that could run passed (read the first line for what that
covers), 3 invalid (the first failing seq and the reason are printed), 1 unreadable or
malformed, 2 bad arguments.`,
		Args: cmdutil.ExactArgs(1, "one export file (- for standard input)"),
		Example: `  # Verify an export with the operator's public key and the chain's secret
  CAIRN_HMAC_SECRET=... cairn verify-export chain-export.json --public-key public.pem

  # Verify an export read from standard input with the public key alone
  cat chain-export.json | cairn verify-export - --public-key public.pem`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.publicKey, "public-key", "", "operator public key (PEM) the export must be signed by")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document: the verdict, the checks and any error")
	cmd.Flags().StringVar(&o.SecretHex, "secret-hex", "", "HMAC secret in hex (prefer CAIRN_HMAC_SECRET)")
	cmd.Flags().StringVar(&o.SecretFile, "secret-file", "", "file holding the HMAC secret in hex")
	return cmd
}

// Complete takes the export file from the arguments.
func (o *verifyExportOptions) Complete(_ *cobra.Command, args []string) error {
	o.file = args[0]
	return nil
}

// Run verifies the export and prints what it checked.
func (o *verifyExportOptions) Run(cmd *cobra.Command) error {
	secret, err := o.Secret(false)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	var opts protocol.VerifyOptions
	opts.Secret = secret
	if o.publicKey != "" {
		text, err := os.ReadFile(o.publicKey)
		if err != nil {
			return fmt.Errorf("read public key: %w", err)
		}
		if opts.PublicKey, err = protocol.ParsePublicKeyPEM(text); err != nil {
			return fmt.Errorf("public key %s: %w", o.publicKey, err)
		}
	}
	in, closeIn, err := cmdutil.OpenInput(cmd.InOrStdin(), o.file)
	if err != nil {
		return err
	}
	defer closeIn()
	br := bufio.NewReaderSize(in, 1<<20)
	legacy := legacyExportFormat(br) != ""
	switch {
	case legacy && o.asJSON:
		return verifyLegacyExportJSON(cmd.OutOrStdout(), br, opts.Secret, opts.PublicKey)
	case legacy:
		return verifyLegacyExport(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.file, br, opts.Secret, opts.PublicKey)
	}
	report, err := protocol.VerifyExport(br, opts)
	if o.asJSON {
		return writeExportReportJSON(cmd.OutOrStdout(), report, err)
	}
	if err != nil {
		return err
	}
	return printExportReport(cmd.OutOrStdout(), report)
}

// printExportReport writes what verify-export checked. "valid" is said only when every
// header member is authenticated; otherwise the members nothing checked are named.
func printExportReport(w io.Writer, report *protocol.ExportReport) error {
	h := report.Header
	carried := fmt.Sprintf("%d entries", report.Entries)
	hmacs := fmt.Sprintf("%t", report.HMACsChecked)
	if report.Entries == 0 {
		carried = "header only"
		hmacs = "false (no entries)"
	}
	verdict := "valid"
	if len(report.Unauthenticated) > 0 {
		verdict = "checks passed, not all authenticated"
	}
	if _, err := fmt.Fprintf(w, "%s: export of seq %d..%d (%s), HMACs checked: %s, chain_signature checked: %t, signer trusted: %t\n",
		verdict, h.FirstSeq, h.LastSeq, carried, hmacs, report.ChainSignatureChecked, report.KeyTrusted); err != nil {
		return err
	}
	if im := report.Import; im != nil {
		if _, err := fmt.Fprintln(w, importLine(im)); err != nil {
			return err
		}
	}
	if len(report.Unauthenticated) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "authenticated: %s (by the secret)\nnot authenticated: %s (nothing checked them: give --public-key to check the signature that covers them)\n",
		strings.Join(report.Authenticated, ", "), strings.Join(report.Unauthenticated, ", "))
	return err
}

// importLine says what verify-export checked of the entries the chain imported from
// BIJOTEL behind its bridge record (docs/PROTOCOL.md §2).
func importLine(im *protocol.ImportReport) string {
	b := im.Bridge
	line := fmt.Sprintf("imported: entries %d..%d are BIJOTEL rows %d..%d behind the bridge record; ", b.FirstSeq, b.LastSeq, b.LegacyFirstSeq, b.LegacyLastSeq)
	switch {
	case !im.ColumnsChecked:
		return line + "their columns were not checked (the export does not hold them all)"
	case im.LegacyHMACsRederived:
		return line + "their columns match legacy_rows_sha256, and the secret re-derives the legacy chain"
	}
	return line + "their columns match legacy_rows_sha256; the legacy export (legacy_export_sha256 " + b.LegacyExportSHA256 + ") proves the legacy chain"
}
