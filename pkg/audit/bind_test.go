package audit

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// header is an export header of seq first..last ending at hash last and starting after prev.
func header(first, last int64, prev, end, cs string) *protocol.ExportHeader {
	return &protocol.ExportHeader{FirstSeq: first, LastSeq: last, EntryCount: last, FirstPrevHash: prev, LastHMACHash: end, ChainSignature: cs}
}

func check(t *testing.T, rep *Report, subject, name string) Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Subject == subject && c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %s of %s in %+v", name, subject, rep.Checks)
	return Check{}
}

// TestRotatedKeyExportIsTied: with the federation's records, an export signed by the
// operator's rotated key is the operator's, and the audit passes.
func TestRotatedKeyExportIsTied(t *testing.T) {
	f := newFixture(t)
	r := receiptOf(f.operatorID, "cs80")
	exports := []Export{{Subject: "export new", Header: header(41, 80, "h40", "h80", "cs80"), Signer: signerOf(pemOf(t, f.newKey))}}

	without := &Report{}
	without.Exports(r, exports, nil, f.trust)
	without.Finish()
	if c := check(t, without, "export new", CheckParticipant); c.OK || !strings.Contains(c.Detail, "--fetch-records") {
		t.Fatalf("without records: %+v, want a failure pointing to the records", c)
	}

	rep := &Report{AnchorID: r.AnchorID}
	rep.Exports(r, exports, f.records, f.trust)
	rep.Finish()
	if rep.Verdict != Passed || !check(t, rep, "export new", CheckParticipant).OK || !check(t, rep, "export new", CheckBoundByReceipt).OK {
		t.Fatalf("with records: %s %+v, want passed", rep.Verdict, rep.Checks)
	}
	if !strings.HasPrefix(rep.Summary(), "AUDIT PASSED") {
		t.Fatal(rep.Summary())
	}
}

// TestEarlierSegmentIsExplained: an export that ends before the head the receipt binds is
// covered through the later export it leads to; alone, it is explained with the seq the
// federation lists, and the audit is partial, not failed, not passed.
func TestEarlierSegmentIsExplained(t *testing.T) {
	f := newFixture(t)
	signer := signerOf(pemOf(t, f.oldKey))
	r := receiptOf(f.operatorID, "cs80")
	early := Export{Subject: "export early", Header: header(1, 40, "h0", "h40", "cs40"), Signer: signer}
	late := Export{Subject: "export late", Header: header(41, 80, "h40", "h80", "cs80"), Signer: signer}

	rep := &Report{}
	rep.Exports(r, []Export{early, late}, nil, f.trust)
	rep.Finish()
	c := check(t, rep, "export early", CheckCoveredByLaterExport)
	if rep.Verdict != Passed || !c.OK || !strings.Contains(c.Detail, "export ends at seq 40; the receipt binds the head at seq 80") {
		t.Fatalf("early and late: %s, %+v", rep.Verdict, c)
	}

	anchor := "anchor-20261124-001"
	f.records.Operators[0].Submissions = []Submission{
		{SubmissionID: "sub-2", FirstSeq: 41, LastSeq: 80, ChainSignature: "cs80"},
		{SubmissionID: "sub-1", FirstSeq: 1, LastSeq: 40, ChainSignature: "cs40", AnchorID: &anchor},
	}
	rep = &Report{}
	rep.Exports(r, []Export{early}, f.records, f.trust)
	rep.Finish()
	c = check(t, rep, "export early", CheckBoundByReceipt)
	if rep.Verdict != Partial || !c.Skipped || !strings.Contains(c.Detail, "export ends at seq 40; the receipt binds") ||
		!strings.Contains(c.Detail, "head at seq 80") || !strings.Contains(c.Detail, anchor) {
		t.Fatalf("early alone with records: %s, %+v", rep.Verdict, c)
	}
	if s := rep.Summary(); !strings.HasPrefix(s, "AUDIT PARTIAL") || strings.Contains(s, "PASSED") || !strings.Contains(s, "1 check was not made") {
		t.Fatalf("summary of a partial audit: %q", s)
	}

	rep = &Report{}
	rep.Exports(r, []Export{early}, nil, f.trust)
	rep.Finish()
	c = check(t, rep, "export early", CheckBoundByReceipt)
	if rep.Verdict != Failed || !strings.Contains(c.Detail, "if "+f.operatorID+" submitted after seq 40") {
		t.Fatalf("early alone without records: %s, %+v", rep.Verdict, c)
	}
	if s := rep.Summary(); !strings.Contains(s, "1 check does not hold") {
		t.Fatalf("summary: %q, want the singular", s)
	}
}

// TestParticipantWithoutExportIsPartial: a participant nobody gave an export of leaves
// the audit partial, naming it.
func TestParticipantWithoutExportIsPartial(t *testing.T) {
	r := &protocol.Receipt{AnchorID: "anchor-20261125-001", ParticipatingOperators: []protocol.Participant{{OperatorID: "op_0000000000000001", ChainSignature: "a"}}}
	rep := &Report{AnchorID: r.AnchorID}
	rep.Exports(r, nil, nil, Trust{})
	rep.Finish()
	if rep.Verdict != Partial || rep.Passed || len(rep.NotChecked) != 1 || !strings.Contains(rep.NotChecked[0], "op_0000000000000001") {
		t.Fatalf("%s %+v", rep.Verdict, rep)
	}
}

// TestBeyondAuditIsNotPartial: a check no auditor can make (the entries' HMACs) is shown
// but does not make the audit partial; any other skip does.
func TestBeyondAuditIsNotPartial(t *testing.T) {
	rep := &Report{}
	rep.Pass("receipt", "federation_signature", "")
	rep.Beyond("export", protocol.Check{Name: protocol.CheckHMACs, Skipped: true, Detail: "no secret"})
	rep.Finish()
	if rep.Verdict != Passed || len(rep.Checks) != 2 {
		t.Fatalf("%s %+v, want passed with the HMAC check shown", rep.Verdict, rep.Checks)
	}
	rep.Skip("log", "tlog_entry", "not read")
	rep.Finish()
	if rep.Verdict != Partial {
		t.Fatalf("%s, want partial", rep.Verdict)
	}
}
