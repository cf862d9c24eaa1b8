package audit

import (
	"crypto/ed25519"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Check names of Exports, beside those of protocol.VerifyExport.
const (
	// CheckKeyHistory: a participant's key history verifies (VerifyKeyHistory).
	CheckKeyHistory = "key_history"
	// CheckParticipant: the export's signer is a key of a participant of the anchor.
	CheckParticipant = "participant"
	// CheckBoundByReceipt: the receipt binds the export's chain_signature for its operator
	// (protocol.CheckChainSignature is the export's own: its header against its entries).
	CheckBoundByReceipt = "bound_by_receipt"
	// CheckCoveredByLaterExport: the export's segment leads, link by link, to an export
	// whose chain_signature the receipt binds.
	CheckCoveredByLaterExport = "covered_by_later_export"
	// CheckExport: a participant's export was given.
	CheckExport = "export"
)

// Export is an export that verified (protocol.VerifyExport) under the key that signed it.
type Export struct {
	// Subject names it in the report ("export <path>").
	Subject string
	Header  *protocol.ExportHeader
	Signer  ed25519.PublicKey
}

// owner is the participant a key belongs to, and what proves it.
type owner struct {
	operatorID, how string
}

// Exports checks each export against receipt r, which the caller verified: its signer is
// a participant's key (the participant's own, or one its key history in recs gives it,
// verified under t), and r binds its chain_signature or a later export's that its segment
// leads to. Participants without an export are reported as not audited.
func (rep *Report) Exports(r *protocol.Receipt, exports []Export, recs *Records, t Trust) {
	owners := map[string]owner{}
	bound := map[string]string{} // operator ID -> chain_signature
	for _, p := range r.Participants() {
		bound[p.OperatorID] = p.ChainSignature
		owners[p.OperatorID] = owner{p.OperatorID, "its registered key"}
		o := recs.Operator(p.OperatorID)
		if o == nil {
			continue
		}
		keys, err := VerifyKeyHistory(o, t)
		if err != nil {
			rep.Fail("records of "+p.OperatorID, CheckKeyHistory, err)
		} else {
			rep.Pass("records of "+p.OperatorID, CheckKeyHistory, plural(len(keys), "key", "keys")+" verified, oldest first")
		}
		for _, k := range keys {
			owners[protocol.OperatorID(k.Key)] = owner{p.OperatorID, k.How}
		}
	}

	byOperator := map[string][]*Export{}
	for i := range exports {
		e := &exports[i]
		keyID := protocol.OperatorID(e.Signer)
		o, ok := owners[keyID]
		if !ok {
			hint := ""
			if recs == nil {
				hint = "; an operator that rotated its key signs with a key whose ID is not its own: pass the federation's records " +
					"(cairn federation audit --fetch-records) to tie its rotated keys to it"
			}
			rep.Fail(e.Subject, CheckParticipant, fmt.Errorf("%w: the export is signed by key %s, which is no participant of the anchor "+
				"nor a key any verified record gives one%s", protocol.ErrKeyNotTrusted, keyID, hint))
			continue
		}
		detail := o.operatorID + " took part in the anchor"
		if keyID != o.operatorID {
			detail += fmt.Sprintf("; the export is signed by its key %s, %s", keyID, o.how)
		}
		rep.Pass(e.Subject, CheckParticipant, detail)
		byOperator[o.operatorID] = append(byOperator[o.operatorID], e)
	}

	for _, p := range r.Participants() {
		es := byOperator[p.OperatorID]
		if len(es) == 0 {
			rep.Skip(p.OperatorID, CheckExport, "not audited: no export of this participant was given")
			continue
		}
		for _, e := range es {
			rep.bind(e, es, p.OperatorID, bound[p.OperatorID], recs.Operator(p.OperatorID))
		}
	}
}

// bind checks that the receipt binds e's chain_signature (want), directly or through
// the operator's later exports es.
func (rep *Report) bind(e *Export, es []*Export, operatorID, want string, o *OperatorRecords) {
	h := e.Header
	if h.ChainSignature == want {
		rep.Pass(e.Subject, CheckBoundByReceipt, fmt.Sprintf("the receipt binds this export's chain_signature (seq %d..%d, entry_count %d)",
			h.FirstSeq, h.LastSeq, h.EntryCount))
		return
	}
	if head := leadsTo(e, es, want); head != nil {
		rep.Pass(e.Subject, CheckCoveredByLaterExport, fmt.Sprintf("export ends at seq %d; the receipt binds the head at seq %d (%s, seq %d..%d), "+
			"which this segment leads to (each later export's signed header starts where the one before ends): the anchor covers it through that export",
			h.LastSeq, head.Header.LastSeq, head.Subject, head.Header.FirstSeq, head.Header.LastSeq))
		return
	}
	var boundSub, ownSub *Submission
	if o != nil {
		for i := range o.Submissions {
			switch s := &o.Submissions[i]; s.ChainSignature {
			case want:
				boundSub = s
			case h.ChainSignature:
				ownSub = s
			}
		}
	}
	if boundSub != nil && boundSub.LastSeq > h.LastSeq {
		detail := fmt.Sprintf("export ends at seq %d; the receipt binds %s's head at seq %d (%s, seq %d..%d, as the federation lists it): "+
			"this anchor covers a later export; pass the exports through seq %d to audit this one through them",
			h.LastSeq, operatorID, boundSub.LastSeq, boundSub.SubmissionID, boundSub.FirstSeq, boundSub.LastSeq, boundSub.LastSeq)
		if ownSub != nil && ownSub.AnchorID != nil {
			detail += fmt.Sprintf(", or audit it with the receipt of %s, which the federation lists as anchoring it", *ownSub.AnchorID)
		}
		rep.Skip(e.Subject, CheckBoundByReceipt, detail)
		return
	}
	err := &protocol.MismatchError{Field: "chain_signature", Want: want, Got: h.ChainSignature}
	switch {
	case boundSub != nil:
		rep.Fail(e.Subject, CheckBoundByReceipt, fmt.Errorf("export ends at seq %d, at or past the head at seq %d the receipt binds, "+
			"with another chain_signature: %w", h.LastSeq, boundSub.LastSeq, err))
	default:
		rep.Fail(e.Subject, CheckBoundByReceipt, fmt.Errorf("export (seq %d..%d) is not the head the receipt binds for %s: %w; "+
			"if %s submitted after seq %d, the receipt binds that later head: pass the later exports too, or the federation's records "+
			"(--fetch-records) to see which seq it binds", h.FirstSeq, h.LastSeq, operatorID, err, operatorID, h.LastSeq))
	}
}

// leadsTo follows e's segment through es (each next export starts at the seq after and
// from the hash where the last ends) to one whose chain_signature is want.
func leadsTo(e *Export, es []*Export, want string) *Export {
	seen := map[*Export]bool{e: true}
	for cur := e; ; {
		var next *Export
		for _, n := range es {
			if !seen[n] && n.Header.FirstSeq == cur.Header.LastSeq+1 && n.Header.FirstPrevHash == cur.Header.LastHMACHash {
				next = n
				break
			}
		}
		if next == nil {
			return nil
		}
		if next.Header.ChainSignature == want {
			return next
		}
		seen[next], cur = true, next
	}
}
