package main

import (
	"bufio"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// auditOptions configures `cairn federation audit`.
type auditOptions struct {
	trust   trustFlags
	receipt string
	exports []string
	log     string
}

func newFederationAuditCommand(fo *federationOptions) *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit --receipt RECEIPT --export E1.json [--export E2.json ...] [--log URL]",
		Short: "Audit an anchor: its receipt, the participants' exports and its log entry",
		Long: `Audit a cross-anchor as an outsider, with the participants' exports:

  - the receipt verifies, as cairn federation verify checks it, under --federation-key or
    the pinned key;
  - each export verifies under the key that signed it (every body hash, link, the Merkle
    root and the signature), that key's operator is a participant of the anchor, and the
    export's chain_signature is the one the receipt binds for it;
  - online, when --log or the receipt's tlog_url answers: the log's entry at the receipt's
    index is read afresh, its inclusion proved against the log's current checkpoint, and
    its record checked: the SHA-512 of the cross-anchor hash, the federation key, its
    signature. A log that does not answer, or a receipt with no tlog_url (its federation
    had no public URL), skips this check, unless --log names the log.

Participants without an export are listed as not audited. --log is the log's base URL: a
Rekor server, or a federation's <public URL>/federation/log, as the receipt's tlog_url is.

Exit status: 0 every check holds, 3 one does not, 1 an input cannot be read or is
malformed, 2 the arguments are wrong.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.receipt == "" || len(o.exports) == 0 {
				return cmdutil.UsageError{Err: errors.New("--receipt and at least one --export are required")}
			}
			keys, err := fo.trusted(o.trust)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), fo.timeout)
			defer cancel()
			a, err := o.audit(ctx, cmd.InOrStdin(), keys)
			if err != nil {
				return err
			}
			return a.print(cmd.OutOrStdout(), fo.json)
		},
	}
	o.trust.add(cmd)
	cmd.Flags().StringVar(&o.receipt, "receipt", "", "the anchor's receipt (- for standard input)")
	cmd.Flags().StringArrayVar(&o.exports, "export", nil, "a participant's export of the anchored segment (repeat for each)")
	cmd.Flags().StringVar(&o.log, "log", "", "base URL of the transparency log (default: from the receipt's tlog_url)")
	return cmd
}

// auditCheck is one line of an audit.
type auditCheck struct {
	Subject string `json:"subject"`
	protocol.Check
	err error
}

// auditReport is every check of an audit.
type auditReport struct {
	AnchorID string       `json:"anchor_id,omitempty"`
	Passed   bool         `json:"passed"`
	Checks   []auditCheck `json:"checks"`
}

func (a *auditReport) add(subject string, c protocol.Check, err error) {
	a.Checks = append(a.Checks, auditCheck{Subject: subject, Check: c, err: err})
}

func (a *auditReport) pass(subject, name, detail string) {
	a.add(subject, protocol.Check{Name: name, OK: true, Detail: detail}, nil)
}

func (a *auditReport) skip(subject, name, detail string) {
	a.add(subject, protocol.Check{Name: name, Skipped: true, Detail: detail}, nil)
}

func (a *auditReport) fail(subject, name string, err error) {
	a.add(subject, protocol.Check{Name: name, Detail: err.Error()}, err)
}

// audit runs every check; it returns an error only for a receipt it cannot read.
func (o *auditOptions) audit(ctx context.Context, stdin io.Reader, keys *trustedKeys) (*auditReport, error) {
	raw, err := readInput(stdin, o.receipt)
	if err != nil {
		return nil, err
	}
	a := &auditReport{Checks: []auditCheck{}}
	rep, rerr := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: keys.federation, LogKey: keys.log})
	for i, c := range rep.Checks {
		var err error
		if !c.OK && !c.Skipped && i == len(rep.Checks)-1 {
			err = rerr
		}
		a.add("receipt "+o.receipt, c, err)
	}
	if rep.Receipt == nil { // unreadable: nothing to audit the exports against
		return a, nil
	}
	r := rep.Receipt
	a.AnchorID = r.AnchorID
	bound := make(map[string]string, len(r.ParticipatingOperators)) // operator ID -> chain_signature
	for _, p := range r.ParticipatingOperators {
		bound[p.OperatorID] = p.ChainSignature
	}
	audited := map[string]bool{}
	for _, path := range o.exports {
		if id := auditExport(a, path, bound); id != "" {
			audited[id] = true
		}
	}
	for _, p := range r.ParticipatingOperators {
		if !audited[p.OperatorID] {
			a.skip(p.OperatorID, "export", "not audited: no export of this participant was given")
		}
	}
	if rerr == nil {
		o.auditLog(ctx, a, r, keys.log)
	} else {
		a.skip("log", "tlog_entry", "not read: the receipt does not verify")
	}
	return a, nil
}

// auditExport checks the export at path against the receipt's participants and returns
// the operator it belongs to ("" when it belongs to none).
func auditExport(a *auditReport, path string, bound map[string]string) string {
	subject := "export " + path
	f, err := os.Open(path)
	if err != nil {
		a.fail(subject, "read", err)
		return ""
	}
	defer func() { _ = f.Close() }()
	// No key is trusted yet: the receipt, under the federation's key, says which
	// operators took part, and an operator ID is the hash of its key.
	rep, err := protocol.VerifyExport(bufio.NewReaderSize(f, 1<<20), protocol.VerifyOptions{})
	if rep == nil || !errors.Is(err, protocol.ErrNoTrustedKey) {
		if err == nil {
			err = errors.New("the export verified under no key")
		}
		if rep != nil {
			for _, c := range rep.Checks[:len(rep.Checks)-1] {
				a.add(subject, c, nil)
			}
		}
		a.fail(subject, "export", err)
		return ""
	}
	for _, c := range rep.Checks[:len(rep.Checks)-1] { // all but trusted_key, which the receipt settles
		a.add(subject, c, nil)
	}
	signer, err := protocol.ParsePublicKeyPEM([]byte(rep.Envelope.Signature.PublicKey))
	if err != nil { // verified above: cannot happen
		a.fail(subject, "participant", err)
		return ""
	}
	id := protocol.OperatorID(signer)
	want, ok := bound[id]
	if !ok {
		a.fail(subject, "participant", fmt.Errorf("%w: the export is signed by %s, which is no participant of the anchor (an operator that rotated its key signs with a key whose ID is not its own)", protocol.ErrKeyNotTrusted, id))
		return ""
	}
	a.pass(subject, "participant", id+" took part in the anchor")
	if got := rep.Header.ChainSignature; got != want {
		a.fail(subject, "chain_signature", &protocol.MismatchError{Field: "chain_signature", Want: want, Got: got})
		return id
	}
	a.pass(subject, "chain_signature", fmt.Sprintf("the receipt binds this export's chain_signature (seq %d..%d, entry_count %d)",
		rep.Header.FirstSeq, rep.Header.LastSeq, rep.Header.EntryCount))
	return id
}

// auditLog reads the anchor's entry from its log afresh and checks it records the
// receipt's anchor under the receipt's log key (or, for a legacy receipt, trustedLog).
func (o *auditOptions) auditLog(ctx context.Context, a *auditReport, r *protocol.Receipt, trustedLog crypto.PublicKey) {
	const name = "tlog_entry"
	if r.TLogLogIndex == nil || r.TLogURL == nil {
		a.skip("log", name, "the receipt has no log entry yet")
		return
	}
	key := trustedLog
	if r.TLogPublicKeyPEM != nil {
		var err error
		if key, err = protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM)); err != nil {
			a.fail("log", name, err)
			return
		}
	}
	if key == nil {
		a.fail("log", name, fmt.Errorf("%w: a legacy receipt names no log key: pass --log-key", protocol.ErrNoTrustedKey))
		return
	}
	base, rekor := logBase(*r.TLogURL)
	if o.log != "" {
		base = o.log
	}
	if base == "" { // the federation had no publicURL when it signed the receipt
		a.skip("log", name, "the receipt names no log URL: audited offline (pass --log to read the entry)")
		return
	}
	entry, err := readLogEntry(ctx, base, rekor, *r.TLogLogIndex, key)
	switch {
	case errors.Is(err, tlog.ErrUnavailable) && o.log == "":
		a.skip("log", name, fmt.Sprintf("the log at %s did not answer (%v): audited offline", base, err))
		return
	case err != nil:
		a.fail("log", name, err)
		return
	}
	fresh := *r
	if fresh.TLogEntry, err = json.Marshal(&entry.Bundle); err != nil {
		a.fail("log", name, err)
		return
	}
	if err := protocol.VerifyReceiptLog(&fresh, protocol.LogVerifyOptions{Key: key, AllowMissingSET: !rekor}); err != nil {
		a.fail("log", name, err)
		return
	}
	logID, _ := protocol.LogID(key)
	a.pass("log", name, fmt.Sprintf("log %s holds the anchor at index %d, proved against its checkpoint of %d entries read now from %s",
		logID, entry.Index, entry.Bundle.Verification.InclusionProof.TreeSize, base))
}

// rekorEntriesPath is where a Rekor entry URL names an entry.
const rekorEntriesPath = "/api/v1/log/entries"

// logBase returns the base URL of the log a receipt's tlog_url names, and whether it is
// a Rekor server (tlog_url is then an entry's URL) rather than tlog-tiles.
func logBase(tlogURL string) (string, bool) {
	if i := strings.Index(tlogURL, rekorEntriesPath); i >= 0 {
		return tlogURL[:i], true
	}
	return tlogURL, false
}

// readLogEntry reads the entry at index of the log at base, proved under key.
func readLogEntry(ctx context.Context, base string, rekor bool, index int64, key crypto.PublicKey) (*tlog.Entry, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	if rekor {
		keyPEM, err := logKeyPEM(key)
		if err != nil {
			return nil, err
		}
		r, err := tlog.NewRekor(tlog.RekorOptions{URL: base, PublicKeyPEM: keyPEM, Attempts: 1, HTTPClient: hc})
		if err != nil {
			return nil, err
		}
		return r.Entry(ctx, index)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("log URL %q is not an absolute http or https URL", base)
	}
	return tlog.ReadURLEntry(ctx, u, hc, index, key)
}

// print writes the checks as a table or JSON and returns the audit's verdict as an error.
func (a *auditReport) print(w io.Writer, asJSON bool) error {
	var failed error
	failures := 0
	for _, c := range a.Checks {
		if !c.OK && !c.Skipped {
			failures++
			if c.err != nil && (failed == nil || cmdutil.ExitCode(c.err) == cmdutil.ExitMismatch) {
				failed = c.err
			}
		}
	}
	if failures > 0 && failed == nil {
		failed = protocol.ErrMismatch
	}
	a.Passed = failures == 0
	if asJSON {
		if err := cmdutil.WriteJSON(w, a); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for i, c := range a.Checks {
			if i == 0 || a.Checks[i-1].Subject != c.Subject {
				b.WriteString(c.Subject + "\n")
			}
			b.WriteString("  ")
			cmdutil.WriteChecks(&b, []protocol.Check{c.Check})
		}
		if a.Passed {
			fmt.Fprintf(&b, "AUDIT PASSED  %s: every check holds\n", a.AnchorID)
		} else {
			fmt.Fprintf(&b, "AUDIT FAILED  %s: %d checks do not hold\n", a.AnchorID, failures)
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	if failed != nil {
		return cmdutil.SilentError{Err: failed}
	}
	return nil
}

// logKeyPEM encodes a log key as PKIX PEM, as Rekor serves and pins it.
func logKeyPEM(key crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, fmt.Errorf("log key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
