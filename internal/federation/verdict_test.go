package federation

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// accepted is a Submission of op over first..last with the verdict of acceptance.
func accepted(op fv1.OperatorID, first, last int64) fv1.Submission {
	s := fv1.Submission{ObjectMeta: metav1.ObjectMeta{Name: SubmissionName(op, first), UID: k8stypes.UID("uid-" + SubmissionName(op, first))},
		Spec: fv1.SubmissionSpec{OperatorID: op, FirstSeq: first, LastSeq: last, EntryCount: last, LastHMACHash: "h", ChainSignature: "c"}}
	s.Status.Ed25519Verified, s.Status.ContinuityVerified = true, true
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionContinuityVerified), Status: metav1.ConditionTrue, Reason: "Verified"})
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified), Status: metav1.ConditionTrue, Reason: "Verified"})
	return s
}

// TestHeadOf checks that the head is the newest accepted submission of the operator, or
// the recorded head when that is newer (its Submission gone), and never a refused one or
// another operator's.
func TestHeadOf(t *testing.T) {
	const id fv1.OperatorID = "op_00000000000000a1"
	op := &fv1.FederationOperator{Status: fv1.FederationOperatorStatus{OperatorID: id}}
	refused := accepted(id, 11, 40)
	refused.Status.ContinuityVerified = false
	refused.Status.Conditions = nil
	own := []fv1.Submission{accepted(id, 1, 4), accepted(id, 5, 10), refused, accepted("op_00000000000000b2", 1, 99)}

	if HeadOf(op, nil) != nil {
		t.Error("an operator with nothing accepted has a head")
	}
	h := HeadOf(op, own)
	if h == nil || h.Submission != SubmissionName(id, 5) || h.LastSeq != 10 || h.UID != "uid-"+SubmissionName(id, 5) {
		t.Fatalf("head %+v, want the submission of 5..10", h)
	}
	op.Status.Head = &fv1.SubmissionHead{Submission: SubmissionName(id, 11), LastSeq: 20}
	if h := HeadOf(op, own); h.LastSeq != 20 {
		t.Errorf("head %+v, want the recorded one, newer than every Submission at hand", h)
	}
	h = HeadOf(op, own)
	h.LastSeq = 99
	if op.Status.Head.LastSeq != 20 {
		t.Error("HeadOf returned the operator's own record, not a copy")
	}
}

// TestSubmissionName checks the name every Submission must have.
func TestSubmissionName(t *testing.T) {
	if got := SubmissionName("op_0123456789abcdef", 42); got != "sub-0123456789abcdef-42" {
		t.Errorf("SubmissionName = %s", got)
	}
}

// TestLedgerFold checks the anchored watermark: the highest lastSeq any folded anchor
// bound for an operator, per Federation, each anchor counted once.
func TestLedgerFold(t *testing.T) {
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fed", UID: "fed-1"}}
	other := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fed", UID: "fed-2"}} // made again under the name
	anchor := func(uid string, ps ...fv1.Participant) *fv1.CrossAnchor {
		return &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("ca-" + uid)}, Spec: fv1.CrossAnchorSpec{Participants: ps}}
	}
	var l Ledger
	l.Fold(fed, anchor("1", fv1.Participant{OperatorID: "op_a", LastSeq: 10}, fv1.Participant{OperatorID: "op_b", LastSeq: 3}))
	l.Fold(fed, anchor("2", fv1.Participant{OperatorID: "op_a", LastSeq: 4})) // an older binding folded later
	l.Fold(fed, anchor("3", fv1.Participant{OperatorID: "op_b", LastSeq: 8}))
	for op, want := range map[fv1.OperatorID]int64{"op_a": 10, "op_b": 8, "op_c": 0} {
		if got := l.Through(fed, op); got != want {
			t.Errorf("Through(%s) = %d, want %d", op, got, want)
		}
	}
	if got := l.Through(other, "op_a"); got != 0 {
		t.Errorf("another Federation under the same name sees %d", got)
	}
	if !l.has(fed, "ca-3") || l.has(other, "ca-3") {
		t.Error("folded anchors are not kept per Federation")
	}
}
