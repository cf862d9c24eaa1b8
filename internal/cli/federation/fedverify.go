package federation

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// verifyOptions are `cairn federation verify`'s.
type verifyOptions struct {
	cmdutil.NoValidation
	fed   *federationOptions
	trust trustFlags
	// receipt is the receipt file, - for standard input.
	receipt string
}

func newFederationVerifyCommand(fo *federationOptions) *cobra.Command {
	o := &verifyOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "verify RECEIPT",
		Short: "Verify a cross-anchor receipt offline",
		Long: `Verify a cross-anchor receipt without any network: recompute its cross-anchor hash,
check the federation's signature, and require that the signing key is the one you trust:
--federation-key, or else the key pinned when this machine registered with the federation
(--service, CAIRN_FEDERATION_URL or the default one; nothing is sent to it). With neither,
the receipt is checked but bound to no trusted key, and the result is a mismatch.

A receipt's log proof (tlog_entry) is always verified, under the log key the receipt
signs; --log-key, or else the pinned log key, must also be that key. With a witness
policy (--witness-policy, or one pinned with cairn federation trust --witness-policy),
the proof's checkpoint must carry the cosignatures of the policy's quorum of witnesses.
Every checkpoint verified is remembered in the configuration directory: a later receipt
whose checkpoint has the same size and another root is a split view, reported with both. A legacy receipt
(signed before receipts named their log key) has its log proof verified only under that
key; without one the check fails.

A receipt of the original product's federation (BIJOTEL, bijotel-federation 0.3: anchor_
IDs, rekor_log_index and rekor_url) is recognised and checked by its rules: --federation-key
is then required (no pinned key applies), compared as a key; participants must be stored in
operator_id order, anchor_id must carry anchored_at, the cross-anchor hash is recomputed and
the signature checked over the original's payload. Its Rekor entry is not checked offline
and is reported as skipped.

Exit status: 0 the receipt matches, 3 it does not, 1 it cannot be read or is malformed,
2 the arguments are wrong.`,
		Args: cmdutil.ExactArgs(1, "one receipt file (- for standard input)"),
		Example: `  # Verify a receipt under the keys pinned at registration
  cairn federation verify receipts/anchor-20261125-001.json

  # Verify under a federation key given as a file, reading the receipt from standard input
  cairn federation verify - --federation-key federation.pem < receipt.json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.trust.add(cmd)
	return cmd
}

// Complete takes the receipt file from the arguments.
func (o *verifyOptions) Complete(_ *cobra.Command, args []string) error {
	o.receipt = args[0]
	return nil
}

// Run verifies the receipt offline and prints every check.
func (o *verifyOptions) Run(cmd *cobra.Command) error {
	fo := o.fed
	raw, err := readInput(cmd.InOrStdin(), o.receipt)
	if err != nil {
		return err
	}
	if bijotel.IsReceipt(raw) {
		return verifyLegacyReceipt(cmd.OutOrStdout(), cmd.ErrOrStderr(), fo.json, o.receipt, raw, o.trust)
	}
	keys, err := fo.trusted(o.trust)
	if err != nil {
		return err
	}
	return reportReceipt(cmd.OutOrStdout(), cmd.ErrOrStderr(), fo.json, o.receipt, raw, keys)
}

// verifyResult is what verify prints with --json.
type verifyResult struct {
	Receipt  string           `json:"receipt"`
	Format   string           `json:"format,omitempty"` // set for a BIJOTEL receipt
	Match    bool             `json:"match"`
	KeyFrom  string           `json:"trusted_key_from"`
	Checks   []protocol.Check `json:"checks"`
	Error    string           `json:"error,omitempty"`
	ExitCode int              `json:"exit_code"`
}

// reportReceipt verifies the receipt raw (read from name) under keys and prints every
// check, as a table or JSON.
func reportReceipt(stdout, stderr io.Writer, asJSON bool, name string, raw []byte, keys *trustedKeys) error {
	report, verr := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: keys.federation, LogKey: keys.log})
	res := verifyResult{Receipt: name, KeyFrom: keys.federationFrom}
	if report != nil {
		res.Checks = report.Checks
	}
	if verr == nil {
		var checks []protocol.Check
		checks, verr = witnessChecks(report.Receipt, keys)
		res.Checks = append(res.Checks, checks...)
	}
	return printVerdict(stdout, stderr, asJSON, res, verr)
}

// printVerdict completes res with the verdict verr and prints it, as a table or JSON. A
// mismatch is returned as a cmdutil.SilentError, its message printed already.
func printVerdict(stdout, stderr io.Writer, asJSON bool, res verifyResult, verr error) error {
	res.Match, res.ExitCode = verr == nil, cmdutil.ExitCode(verr)
	if verr != nil {
		res.Error = verr.Error()
	}
	if asJSON {
		if err := cmdutil.WriteJSON(stdout, res); err != nil {
			return err
		}
	} else if err := printChecks(stdout, res); err != nil {
		return err
	}
	if verr != nil {
		if !asJSON {
			_, _ = fmt.Fprintf(stderr, "cairn federation verify: %v\n", verr)
		}
		return cmdutil.SilentError{Err: verr}
	}
	return nil
}

func printChecks(w io.Writer, res verifyResult) error {
	var b strings.Builder
	cmdutil.WriteChecks(&b, res.Checks)
	if res.Match {
		fmt.Fprintf(&b, "MATCH     receipt %s verifies (trusted key: %s)\n", res.Receipt, res.KeyFrom)
	} else {
		fmt.Fprintf(&b, "MISMATCH  receipt %s does not verify\n", res.Receipt)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readInput reads a file, or standard input for "-", up to 16 MiB.
func readInput(stdin io.Reader, path string) ([]byte, error) {
	const limit = 16 << 20
	r, closeR, err := cmdutil.OpenInput(stdin, path)
	if err != nil {
		return nil, err
	}
	defer closeR()
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", protocol.ErrMalformed, path, limit)
	}
	return raw, nil
}
