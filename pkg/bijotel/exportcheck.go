package bijotel

import (
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// checker collects an export's checks and remembers the first that failed.
type checker struct {
	report *ExportReport
	first  *CheckError
}

func (c *checker) pass(name, detail string) {
	c.report.Checks = append(c.report.Checks, protocol.Check{Name: name, OK: true, Detail: detail})
}

func (c *checker) skip(name, detail string) {
	c.report.Checks = append(c.report.Checks, protocol.Check{Name: name, Skipped: true, Detail: detail})
}

func (c *checker) fail(err *CheckError) {
	c.report.Checks = append(c.report.Checks, protocol.Check{Name: err.Check, Detail: err.Reason})
	if c.first == nil {
		c.first = err
	}
}

// passed reports whether every check named passed.
func (c *checker) passed(names ...string) bool {
	for _, name := range names {
		for _, ch := range c.report.Checks {
			if ch.Name == name && !ch.OK {
				return false
			}
		}
	}
	return true
}

// segment checks the segment block against the entries (the original checks none of
// this: it only starts the walk at boundary_prev_hash).
func (c *checker) segment(env *Envelope, w *entryWalker) {
	s := env.Segment
	if s == nil {
		c.pass("segment", "none: the entries must start at GENESIS, a chain's first row")
		return
	}
	var reason string
	switch {
	case w.n == 0:
		reason = "segment block in an export without entries"
	case s.FirstSeq != w.firstSeq || s.LastSeq != w.lastSeq:
		reason = fmt.Sprintf("segment seq %d..%d, but the entries run %d..%d", s.FirstSeq, s.LastSeq, w.firstSeq, w.lastSeq)
	case s.TotalInSegment != w.n:
		reason = fmt.Sprintf("segment total_in_segment %d, but the export holds %d entries", s.TotalInSegment, w.n)
	case s.BoundaryPrevHash != w.firstPrev:
		reason = "segment boundary_prev_hash is not the first entry's prev_hash"
	case s.TotalInFullChain < s.TotalInSegment:
		reason = fmt.Sprintf("segment total_in_full_chain %d is below total_in_segment %d", s.TotalInFullChain, s.TotalInSegment)
	case s.IsCompleteChain != (s.FirstSeq == 1 && s.LastSeq == s.TotalInFullChain):
		reason = "segment is_complete_chain disagrees with first_seq, last_seq and total_in_full_chain"
	case s.FirstSeq == 1 && s.BoundaryPrevHash != GenesisHash:
		reason = "segment starts at seq 1 but its boundary_prev_hash is not GENESIS"
	}
	if reason != "" {
		c.fail(&CheckError{Check: "segment", Reason: reason, kind: protocol.ErrMismatch})
		return
	}
	if s.FirstSeq == 1 { // and so boundary_prev_hash is GENESIS (checked above)
		c.pass("segment", fmt.Sprintf("seq %d..%d from GENESIS, consistent with the entries", s.FirstSeq, s.LastSeq))
		return
	}
	c.report.BoundaryTrusted = true
	c.pass("segment", fmt.Sprintf("seq %d..%d, consistent with the entries; boundary_prev_hash %s... trusted from the file",
		s.FirstSeq, s.LastSeq, s.BoundaryPrevHash[:16]))
}

// bound is the last check: whether anything binds the entries.
func (c *checker) bound(opts VerifyOptions) {
	const name = "entries_bound"
	switch {
	case c.first != nil && c.first.Check == "trust_anchor":
		c.fail(&CheckError{Check: name, Reason: "not bound: no trust anchor binds them", kind: protocol.ErrNoTrustedKey})
	case c.first != nil:
		c.fail(&CheckError{Check: name, Reason: "not bound: an earlier check failed", kind: protocol.ErrMismatch})
	case opts.Secret != nil:
		c.report.EntriesBound = true
		c.pass(name, "chain_signature binds head_hash and entries_count, the HMAC links every body to it")
	default:
		c.fail(&CheckError{Check: name, Reason: VerdictNotBound + ": the Ed25519 signature covers only chain_signature, an HMAC only the secret's holder can recompute, so bodies, head_hash, entries_count and segment are not bound (a forged body or a cut tail passes); give the HMAC secret to bind them", kind: ErrEntriesNotBound})
	}
}

// notes says what no check covers.
func (c *checker) notes(env *Envelope) {
	r := c.report
	r.Notes = append(r.Notes, "row metadata (seq, timestamp_ns, trace_id, span_id, span_name, span_kind, semantic_body_hash) and created_at are bound by no hash")
	if r.BoundaryTrusted {
		r.Notes = append(r.Notes, fmt.Sprintf("boundary_prev_hash is trusted from the file: nothing here proves it is the hmac_hash of seq %d; verify the export or chain before it to close the gap", env.Segment.FirstSeq-1))
	}
	if env.Segment != nil {
		r.Notes = append(r.Notes, "segment total_in_full_chain and is_complete_chain are bound by nothing")
	}
}

// verdict sets the report's verdict and returns the error VerifyExport returns.
func (c *checker) verdict() error {
	r := c.report
	switch {
	case c.first == nil:
		r.Verdict = VerdictValid
		return nil
	case errors.Is(c.first, ErrEntriesNotBound):
		r.Verdict = VerdictNotBound
	case c.first.Check == "trust_anchor" && r.StructureChecked:
		r.Verdict = VerdictUnbound
	default:
		r.Verdict = VerdictInvalid
	}
	return c.first
}
