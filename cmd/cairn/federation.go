package main

import (
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// pinnedFederationKeyFile is where, in the client's config directory, the federation
// client keeps the federation public key it pinned when it registered.
const pinnedFederationKeyFile = "federation.pem"

func newFederationCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "federation",
		Short: "Work with a Cairn federation as an operator or an auditor",
	}
	cmd.AddCommand(newFederationVerifyCommand())
	return cmd
}

// verifyOptions configures `cairn federation verify`.
type verifyOptions struct {
	federationKey string
	configDir     string
	json          bool
	logKey        string
}

func newFederationVerifyCommand() *cobra.Command {
	o := &verifyOptions{}
	if dir, err := os.UserConfigDir(); err == nil {
		o.configDir = filepath.Join(dir, "cairn")
	}
	cmd := &cobra.Command{
		Use:   "verify RECEIPT",
		Short: "Verify a cross-anchor receipt offline",
		Long: `Verify a cross-anchor receipt without any network: recompute its cross-anchor hash,
check the federation's signature, and require that the signing key is the one you trust:
--federation-key, or else the key the client pinned when it registered
(<config-dir>/federation.pem). With neither, the receipt is checked but bound to no
trusted key, and the result is a mismatch.

A receipt's log proof (tlog_entry) is always verified, under the log key the receipt
signs; --log-key also requires that key. A legacy receipt (signed before receipts named
their log key) has its log proof verified only under --log-key; without it the proof is
reported "skip" (not verified) and does not change the result.

Exit status: 0 the receipt matches, 3 it does not, 1 it cannot be read or is malformed,
2 the arguments are wrong.`,
		Args: exactArgs(1, "one receipt file (- for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	}
	cmd.Flags().StringVar(&o.federationKey, "federation-key", "", "PEM file of the federation public key to trust")
	cmd.Flags().StringVar(&o.configDir, "config-dir", o.configDir, "client configuration directory holding the pinned federation key")
	cmd.Flags().BoolVar(&o.json, "json", false, "print every check as JSON")
	cmd.Flags().StringVar(&o.logKey, "log-key", "", "PEM file of the transparency log's public key to require (and to verify a legacy receipt's log proof with)")
	return cmd
}

// verifyResult is what verify prints with --json.
type verifyResult struct {
	Receipt  string           `json:"receipt"`
	Match    bool             `json:"match"`
	KeyFrom  string           `json:"trusted_key_from"`
	Checks   []protocol.Check `json:"checks"`
	Error    string           `json:"error,omitempty"`
	ExitCode int              `json:"exit_code"`
}

func (o *verifyOptions) run(stdin io.Reader, stdout, stderr io.Writer, path string) error {
	trusted, keyFrom, err := o.trustedKey()
	if err != nil {
		return err
	}
	raw, err := readInput(stdin, path)
	if err != nil {
		return err
	}
	logKey, err := o.loadLogKey()
	if err != nil {
		return err
	}
	report, verr := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: trusted, LogKey: logKey})
	res := verifyResult{Receipt: path, Match: verr == nil, KeyFrom: keyFrom, ExitCode: exitCode(verr)}
	if report != nil {
		res.Checks = report.Checks
	}
	if verr != nil {
		res.Error = verr.Error()
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if err := printChecks(stdout, res); err != nil {
		return err
	}
	if verr != nil {
		if !o.json {
			_, _ = fmt.Fprintf(stderr, "cairn federation verify: %v\n", verr)
		}
		return silentError{verr}
	}
	return nil
}

// loadLogKey reads --log-key, if given.
func (o *verifyOptions) loadLogKey() (crypto.PublicKey, error) {
	if o.logKey == "" {
		return nil, nil
	}
	text, err := os.ReadFile(o.logKey)
	if err != nil {
		return nil, fmt.Errorf("read log key: %w", err)
	}
	key, err := protocol.ParseLogPublicKeyPEM(text)
	if err != nil {
		return nil, fmt.Errorf("log key %s: %w", o.logKey, err)
	}
	return key, nil
}

// trustedKey loads the key named by --federation-key, else the pinned key, else none.
func (o *verifyOptions) trustedKey() (ed25519.PublicKey, string, error) {
	path, from := o.federationKey, "--federation-key"
	if path == "" {
		if o.configDir == "" {
			return nil, "none", nil
		}
		path, from = filepath.Join(o.configDir, pinnedFederationKeyFile), "pinned"
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, "none", nil
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read federation key: %w", err)
	}
	key, err := protocol.ParsePublicKeyPEM(text)
	if err != nil {
		return nil, "", fmt.Errorf("federation key %s: %w", path, err)
	}
	return key, from + " " + path, nil
}

func printChecks(w io.Writer, res verifyResult) error {
	var b strings.Builder
	for _, c := range res.Checks {
		mark := "ok  "
		switch {
		case c.Skipped:
			mark = "skip"
		case !c.OK:
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s  %-22s %s\n", mark, c.Name, c.Detail)
	}
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
	r, closeR, err := openInput(stdin, path)
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

// silentError carries an error whose message the command has already printed.
type silentError struct{ err error }

func (e silentError) Error() string { return e.err.Error() }
func (e silentError) Unwrap() error { return e.err }
