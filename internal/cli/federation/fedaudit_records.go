package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/audit"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// auditTrust is what the participants' key histories are checked under: the trusted
// federation key and, when the receipt verified (rerr nil), the key that signed it; the
// log key the receipt names (its signature covers it), else the trusted one.
func auditTrust(r *protocol.Receipt, rerr error, keys *trustedKeys) audit.Trust {
	t := audit.Trust{LogKey: keys.log}
	if keys.federation != nil {
		t.FederationKeys = append(t.FederationKeys, keys.federation)
	}
	if rerr != nil {
		return t
	}
	if k, err := protocol.ParsePublicKeyPEM([]byte(r.FederationPublicKeyPEM)); err == nil && !k.Equal(keys.federation) {
		t.FederationKeys = append(t.FederationKeys, k)
	}
	if r.TLogPublicKeyPEM != nil {
		if k, err := protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM)); err == nil {
			t.LogKey = k
		}
	}
	return t
}

// loadRecords returns the federation's records the audit uses: read from --records,
// fetched with --fetch-records, or none.
func (o *auditOptions) loadRecords(ctx context.Context, r *protocol.Receipt, t audit.Trust) (*audit.Records, error) {
	switch {
	case o.records != "":
		b, err := os.ReadFile(o.records)
		if err != nil {
			return nil, fmt.Errorf("read the records: %w", err)
		}
		var recs audit.Records
		if err := json.Unmarshal(b, &recs); err != nil {
			return nil, fmt.Errorf("%w: records %s: %w", protocol.ErrMalformed, o.records, err)
		}
		return &recs, nil
	case o.fetchTo != "" && o.fetch != nil:
		return o.fetch(ctx, r, t)
	}
	return nil, nil
}

// fetchRecords reads, from the federation and its log, the records of r's participants
// and writes them to --fetch-records. The keys the federation presents are checked
// against the pins first, as every command that talks to it does; what the records say
// is checked by the audit, offline, not here.
func (o *auditOptions) fetchRecords(ctx context.Context, cmd *cobra.Command, fo *federationOptions, r *protocol.Receipt, t audit.Trust) (*audit.Records, error) {
	s, err := fo.connect(cmd, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := fo.checkPins(cmd, s, clientconfig.TrustOnFirstUse); err != nil {
		return nil, err
	}
	base, rekor := "", false
	if r.TLogURL != nil {
		base, rekor = logBase(*r.TLogURL)
	}
	if o.log != "" {
		base = o.log
	}
	recs := &audit.Records{Service: s.service, FetchedAt: time.Now().UTC().Format(time.RFC3339), Operators: []audit.OperatorRecords{}}
	for _, p := range r.Participants() {
		or, err := fetchOperatorRecords(ctx, s.client, p.OperatorID, func(index int64) (*protocol.LogBundle, error) {
			if base == "" {
				return nil, errors.New("the receipt names no log URL: pass --log")
			}
			if t.LogKey == nil {
				return nil, fmt.Errorf("%w: no log key to read the log with: pass --log-key", protocol.ErrNoTrustedKey)
			}
			e, err := readLogEntry(ctx, base, rekor, index, t.LogKey)
			if err != nil {
				return nil, err
			}
			return &e.Bundle, nil
		})
		if err != nil {
			return nil, err
		}
		recs.Operators = append(recs.Operators, *or)
	}
	var b bytes.Buffer
	if err := cmdutil.WriteJSON(&b, recs); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(o.fetchTo, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "fetched the records of %d participants into %s (audit them offline with --records %s)\n",
		len(recs.Operators), o.fetchTo, o.fetchTo)
	return recs, nil
}

// fetchOperatorRecords reads operator id's key history, each rotation's log entry
// (readEntry), and its submissions (one page, newest first).
func fetchOperatorRecords(ctx context.Context, c *client.Client, id string, readEntry func(int64) (*protocol.LogBundle, error)) (*audit.OperatorRecords, error) {
	ks, err := c.OperatorKeys(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("the key history of %s: %w", id, err)
	}
	o := &audit.OperatorRecords{OperatorID: id, Keys: []audit.HeldKey{}, Submissions: []audit.Submission{}}
	for _, k := range ks.Keys {
		held := audit.HeldKey{PublicKeyPEM: k.PublicKeyPEM, ValidFrom: k.ValidFrom}
		if k.ValidUntil != nil {
			held.ValidUntil = *k.ValidUntil
		}
		if kr := k.Rotation; kr != nil {
			rot := &audit.Rotation{Record: kr.Record, RotationAt: kr.RotationAt, OldKeySignature: kr.OldKeySignature, NewKeySignature: kr.NewKeySignature}
			if kr.TLogLogIndex != nil { // unlogged: the audit says so
				rot.TLogLogIndex = *kr.TLogLogIndex
				if rot.LogEntry, err = readEntry(rot.TLogLogIndex); err != nil {
					return nil, fmt.Errorf("the log entry of %s's key rotation at index %d: %w", id, rot.TLogLogIndex, err)
				}
			}
			held.Rotation = rot
		}
		o.Keys = append(o.Keys, held)
	}
	sum, err := c.Operator(ctx, id, client.PageOptions{Limit: 100})
	if err != nil {
		return nil, fmt.Errorf("the submissions of %s: %w", id, err)
	}
	for _, s := range sum.Submissions {
		o.Submissions = append(o.Submissions, audit.Submission{SubmissionID: s.SubmissionID, FirstSeq: s.FirstSeq, LastSeq: s.LastSeq,
			ChainSignature: s.ChainSignature, AnchorID: s.AnchorID})
	}
	return o, nil
}
