package federation

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
	"github.com/cairn-dev/cairn/pkg/audit"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// auditOptions configures `cairn federation audit`.
type auditOptions struct {
	fed     *federationOptions
	trust   trustFlags
	receipt string
	exports []string
	log     string
	records string
	fetchTo string
	// fetch reads the federation's records of r's participants (fedaudit_records.go).
	fetch func(ctx context.Context, r *protocol.Receipt, t audit.Trust) (*audit.Records, error)
}

func newFederationAuditCommand(fo *federationOptions) *cobra.Command {
	o := &auditOptions{fed: fo}
	cmd := &cobra.Command{
		Use:   "audit --receipt RECEIPT --export E1.json [--export E2.json ...] [--records FILE | --fetch-records FILE] [--log URL]",
		Short: "Audit an anchor: its receipt, the participants' exports and its log entry",
		Long: `Audit a cross-anchor as an outsider, with the participants' exports:

  - the receipt verifies, as cairn federation verify checks it, under --federation-key or
    the pinned key;
  - each export verifies under the key that signed it (every body hash, link, the Merkle
    root and the signature: its own checks, chain_signature among them);
  - participant: the export's key is a participant's. An operator ID is the hash of the
    registered key; an operator that rotated its key signs with a key of another ID, which
    the federation's records tie to it (below);
  - bound_by_receipt: the receipt binds the export's chain_signature for its operator; or
    covered_by_later_export: the export ends before the head the receipt binds, and leads
    (each later export's signed header starting where the one before ends) to an export
    given whose chain_signature the receipt binds. An earlier segment given alone is
    explained: where it ends, and, with the records, the seq the receipt binds;
  - online, when --log or the receipt's tlog_url answers: the log's entry at the receipt's
    index is read afresh, its inclusion proved against the log's current checkpoint, and
    its record checked: the SHA-512 of the cross-anchor hash, the federation key, its
    signature. A log that does not answer, or a receipt with no tlog_url (its federation
    had no public URL), skips this check, unless --log names the log. For a tlog-tiles log
    (the embedded log) log_consistency proves from its tiles that its checkpoint now
    extends the one of the receipt's proof: a log rewritten or rolled back since is a
    split view, reported with both checkpoints;
  - witnesses: with a witness policy (--witness-policy, or one pinned), the checkpoint of
    the receipt's proof must carry its quorum of cosignatures; the check names who
    cosigned. A checkpoint of a size this machine saw before with another root is a split
    view (as verify reports it).

The federation's records: --fetch-records FILE reads, from --service and its log, each
participant's key history (GET /federation/operator/{id}/keys) with the log's proof of
each rotation record, and its submissions, and writes them to FILE; --records FILE audits
with them later, offline. A rotated key counts only when its key_rotation record is in
the log (inclusion proved under the log key the receipt names), signed by the federation
key the audit trusts (or the one that signed the receipt), moves from the operator's
previous key to this one, and, when the federation kept the operator's statement, is
signed by the retired key and the new one. The submissions only explain, never pass.

The verdict: PASSED when every check holds and none was left out; PARTIAL when none
failed but some were not made (a participant without an export, a log not read): the
summary says how many and they are listed as skip; FAILED otherwise. --log is the log's
base URL: a Rekor server, or a federation's <public URL>/federation/log.

Exit status: 0 passed or partial, 3 a check does not hold, 1 an input cannot be read or
is malformed, 2 the arguments are wrong.

Example:
  cairn federation audit --service https://federation.example.com --receipt anchor-20261125-001.json \
    --export acme.json --export globex.json --fetch-records records.json
  cairn federation audit --federation-key federation.pem --receipt anchor-20261125-001.json \
    --export acme.json --export globex.json --records records.json`,
		Args: cmdutil.NoArgs,
		Example: `  # Audit an anchor with its receipt and every participant's export, fetching the records
  cairn federation audit --receipt anchor.json --export acme.json --export globex.json \
    --fetch-records records.json

  # The same audit offline, with the records fetched before
  cairn federation audit --receipt anchor.json --export acme.json --export globex.json \
    --records records.json`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.trust.add(cmd)
	cmd.Flags().StringVar(&o.receipt, "receipt", "", "the anchor's receipt (- for standard input)")
	cmd.Flags().StringArrayVar(&o.exports, "export", nil, "a participant's export of the anchored segment (repeat for each)")
	cmd.Flags().StringVar(&o.log, "log", "", "base URL of the transparency log (default: from the receipt's tlog_url)")
	cmd.Flags().StringVar(&o.records, "records", "", "the federation's records of the participants, as --fetch-records wrote them: read offline")
	cmd.Flags().StringVar(&o.fetchTo, "fetch-records", "", "read the federation's records of the participants (key histories with their log proofs, submissions) "+
		"from --service and the log, write them to this file and audit with them")
	return cmd
}

// Complete needs nothing: the flags are the options.
func (o *auditOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate requires the receipt and an export, and one source of records.
func (o *auditOptions) Validate() error {
	if o.receipt == "" || len(o.exports) == 0 {
		return cmdutil.UsageError{Err: errors.New("--receipt and at least one --export are required")}
	}
	if o.records != "" && o.fetchTo != "" {
		return cmdutil.UsageError{Err: errors.New("give --records FILE (offline) or --fetch-records FILE, not both")}
	}
	return nil
}

// Run audits the anchor and prints the report.
func (o *auditOptions) Run(cmd *cobra.Command) error {
	fo := o.fed
	keys, err := fo.trusted(o.trust)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), fo.timeout)
	defer cancel()
	o.fetch = func(ctx context.Context, r *protocol.Receipt, t audit.Trust) (*audit.Records, error) {
		return o.fetchRecords(ctx, cmd, fo, r, t)
	}
	a, err := o.audit(ctx, cmd.InOrStdin(), keys)
	if err != nil {
		return err
	}
	return printAudit(cmd.OutOrStdout(), a, fo.json)
}

// auditReport is every check of an audit (pkg/audit).
type auditReport = audit.Report

// audit runs every check; it returns an error only for a receipt it cannot read.
func (o *auditOptions) audit(ctx context.Context, stdin io.Reader, keys *trustedKeys) (*auditReport, error) {
	raw, err := readInput(stdin, o.receipt)
	if err != nil {
		return nil, err
	}
	a := &auditReport{Checks: []audit.Check{}}
	rep, rerr := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: keys.federation, LogKey: keys.log})
	for i, c := range rep.Checks {
		var err error
		if !c.OK && !c.Skipped && i == len(rep.Checks)-1 {
			err = rerr
		}
		a.Add("receipt "+o.receipt, c, err)
	}
	if rep.Receipt == nil { // unreadable: nothing to audit the exports against
		return a, nil
	}
	r := rep.Receipt
	a.AnchorID = r.AnchorID
	var exports []audit.Export
	for _, path := range o.exports {
		if e := readAuditExport(a, path); e != nil {
			exports = append(exports, *e)
		}
	}
	t := auditTrust(r, rerr, keys)
	recs, err := o.loadRecords(ctx, r, t)
	if err != nil {
		return nil, err
	}
	a.Exports(r, exports, recs, t)
	if rerr == nil {
		auditWitnesses(a, r, keys)
		o.auditLog(ctx, a, r, keys.log)
	} else {
		a.Skip("log", "tlog_entry", "not read: the receipt does not verify")
	}
	return a, nil
}

// auditWitnesses reports who witnessed the checkpoint of the receipt's log proof under
// the trusted witness policy, and a split view with a checkpoint seen before.
func auditWitnesses(a *auditReport, r *protocol.Receipt, keys *trustedKeys) {
	checks, err := witnessChecks(r, keys)
	for _, c := range checks {
		a.Add("witnesses", c, err)
	}
	if keys.witnesses == nil && err == nil {
		a.Beyond("witnesses", protocol.Check{Name: "witnesses", Skipped: true,
			Detail: "no witness policy given (--witness-policy, or one pinned): the checkpoint's cosignatures are not checked"})
	}
}

// readAuditExport verifies the export at path under the key that signed it and returns
// it; nil (with the failure in a) when it does not verify.
func readAuditExport(a *auditReport, path string) *audit.Export {
	subject := "export " + path
	f, err := os.Open(path)
	if err != nil {
		a.Fail(subject, "read", err)
		return nil
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
				a.Add(subject, c, nil)
			}
		}
		a.Fail(subject, "export", err)
		return nil
	}
	for _, c := range rep.Checks[:len(rep.Checks)-1] { // all but trusted_key, which the receipt settles
		if c.Skipped { // it needs the chain's secret, which stays with its owner, or the entries a header-only export leaves out
			a.Beyond(subject, c)
			continue
		}
		a.Add(subject, c, nil)
	}
	signer, err := protocol.ParsePublicKeyPEM([]byte(rep.Envelope.Signature.PublicKey))
	if err != nil { // verified above: cannot happen
		a.Fail(subject, "participant", err)
		return nil
	}
	return &audit.Export{Subject: subject, Header: rep.Header, Signer: signer}
}

// auditLog reads the anchor's entry from its log afresh and checks it records the
// receipt's anchor under the receipt's log key (or, for a legacy receipt, trustedLog).
func (o *auditOptions) auditLog(ctx context.Context, a *auditReport, r *protocol.Receipt, trustedLog crypto.PublicKey) {
	const name = "tlog_entry"
	if r.TLogLogIndex == nil || r.TLogURL == nil {
		a.Skip("log", name, "the receipt has no log entry yet")
		return
	}
	key := trustedLog
	if r.TLogPublicKeyPEM != nil {
		var err error
		if key, err = protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM)); err != nil {
			a.Fail("log", name, err)
			return
		}
	}
	if key == nil {
		a.Fail("log", name, fmt.Errorf("%w: a legacy receipt names no log key: pass --log-key", protocol.ErrNoTrustedKey))
		return
	}
	base, rekor := logBase(*r.TLogURL)
	if o.log != "" {
		base = o.log
	}
	if base == "" { // the federation had no publicURL when it signed the receipt
		a.Skip("log", name, "the receipt names no log URL: audited offline (pass --log to read the entry)")
		return
	}
	entry, err := readLogEntry(ctx, base, rekor, *r.TLogLogIndex, key)
	switch {
	case errors.Is(err, tlog.ErrUnavailable) && o.log == "":
		a.Skip("log", name, fmt.Sprintf("the log at %s did not answer (%v): audited offline", base, err))
		return
	case errors.Is(err, tlog.ErrUnavailable): // down: nothing more to read from it
		a.Fail("log", name, err)
		return
	case err != nil:
		a.Fail("log", name, err)
	default:
		checkFreshEntry(a, r, entry, key, rekor, base)
	}
	if !rekor && len(r.TLogEntry) > 0 { // whatever its entry now: a log rewritten since is said as such
		auditConsistency(ctx, a, r, base, key)
	}
}

// checkFreshEntry checks that the entry the log holds now at the receipt's index, entry,
// records the receipt's anchor under key.
func checkFreshEntry(a *auditReport, r *protocol.Receipt, entry *tlog.Entry, key crypto.PublicKey, rekor bool, base string) {
	const name = "tlog_entry"
	fresh := *r
	var err error
	if fresh.TLogEntry, err = json.Marshal(&entry.Bundle); err != nil {
		a.Fail("log", name, err)
		return
	}
	if err := protocol.VerifyReceiptLog(&fresh, protocol.LogVerifyOptions{Key: key, AllowMissingSET: !rekor}); err != nil {
		a.Fail("log", name, err)
		return
	}
	logID, _ := protocol.LogID(key)
	a.Pass("log", name, fmt.Sprintf("log %s holds the anchor at index %d, proved against its checkpoint of %d entries read now from %s",
		logID, entry.Index, entry.Bundle.Verification.InclusionProof.TreeSize, base))
}

// auditConsistency proves, from the log's tiles, that the log's checkpoint now extends
// the one the receipt's proof leads to: a log rewritten since is a split view.
func auditConsistency(ctx context.Context, a *auditReport, r *protocol.Receipt, base string, key crypto.PublicKey) {
	const name = "log_consistency"
	var b protocol.LogBundle
	if err := json.Unmarshal(r.TLogEntry, &b); err != nil {
		a.Fail("log", name, err)
		return
	}
	note := []byte(b.Verification.InclusionProof.Checkpoint)
	seen, err := protocol.OpenCheckpoint(note, key)
	if err != nil {
		a.Fail("log", name, err)
		return
	}
	u, _ := url.Parse(base) // parsed by readLogEntry
	now, err := tlog.CheckURLConsistency(ctx, u, &http.Client{Timeout: 30 * time.Second}, key, note, seen)
	switch {
	case errors.Is(err, tlog.ErrUnavailable):
		a.Skip("log", name, fmt.Sprintf("the log at %s did not answer (%v)", base, err))
	case err != nil:
		a.Fail("log", name, err)
	default:
		size := strings.SplitN(string(now), "\n", 3)[1]
		a.Pass("log", name, fmt.Sprintf("the log's checkpoint of %s entries now extends the receipt's of %d (consistency proved from its tiles)", size, seen.Size))
	}
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

// printAudit writes the checks as a table or JSON and returns the audit's verdict as an
// error: a failure exits 3; a partial audit exits 0 but never says PASSED.
func printAudit(w io.Writer, a *auditReport, asJSON bool) error {
	a.Finish()
	var failed error
	for _, c := range a.Checks {
		if !c.OK && !c.Skipped && c.Err != nil && (failed == nil || cmdutil.ExitCode(c.Err) == cmdutil.ExitMismatch) {
			failed = c.Err
		}
	}
	if a.Failures > 0 && failed == nil {
		failed = protocol.ErrMismatch
	}
	if asJSON {
		if err := cmdutil.WriteJSON(w, a); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		var subjects []string // in order of first appearance
		bySubject := map[string][]protocol.Check{}
		for _, c := range a.Checks {
			if _, ok := bySubject[c.Subject]; !ok {
				subjects = append(subjects, c.Subject)
			}
			bySubject[c.Subject] = append(bySubject[c.Subject], c.Check)
		}
		for _, s := range subjects {
			b.WriteString(s + "\n")
			for _, c := range bySubject[s] {
				b.WriteString("  ")
				cmdutil.WriteChecks(&b, []protocol.Check{c})
			}
		}
		b.WriteString(a.Summary() + "\n")
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
