package controllers

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// TestCovers checks the coverage rule: an anchor's entry for an operator covers that
// operator's submissions ending at or before its lastSeq, and nothing of other operators.
func TestCovers(t *testing.T) {
	ca := &fv1.CrossAnchor{Spec: fv1.CrossAnchorSpec{Participants: []fv1.Participant{ // in operator ID order
		{OperatorID: "op_a", ChainSignature: "op_a-cs-30", LastSeq: 30},
		{OperatorID: "op_e", ChainSignature: "op_e-cs-9", LastSeq: 9},
	}}}
	for _, c := range []struct {
		op   string
		last int64
		want bool
	}{
		{"op_a", 10, true},  // below the bound submission
		{"op_a", 30, true},  // the bound submission
		{"op_a", 31, false}, // after it
		{"op_b", 5, false},  // an operator the anchor does not name
		{"op_e", 9, true},
		{"op_f", 1, false}, // sorts after every participant
	} {
		s := &fv1.Submission{Spec: fv1.SubmissionSpec{OperatorID: fv1.OperatorID(c.op), LastSeq: c.last}}
		if got := federation.Covers(ca, s); got != c.want {
			t.Errorf("covers %s through %d: %v, want %v", c.op, c.last, got, c.want)
		}
	}
}

// TestBoundAgrees checks that an anchor's lastSeq for an operator must be that of the
// submission whose chain signature it binds, when that submission is known.
func TestBoundAgrees(t *testing.T) {
	sub := func(cs string, last int64, accepted bool) fv1.Submission {
		s := fv1.Submission{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", last)},
			Spec: fv1.SubmissionSpec{OperatorID: "op_a", ChainSignature: fv1.Hash(cs), LastSeq: last}}
		if accepted {
			setSubmissionCondition(&s, fv1.ConditionContinuityVerified, metav1.ConditionTrue, fv1.ReasonVerified, "test")
		}
		return s
	}
	ca := func(last int64) *fv1.CrossAnchor {
		return &fv1.CrossAnchor{Spec: fv1.CrossAnchorSpec{Participants: []fv1.Participant{{OperatorID: "op_a", ChainSignature: "cs-30", LastSeq: last}}}}
	}
	own := []fv1.Submission{sub("cs-10", 10, true), sub("cs-30", 30, true)}
	if err := boundAgrees(ca(30), "op_a", own); err != nil {
		t.Errorf("the true lastSeq: %v", err)
	}
	if err := boundAgrees(ca(90), "op_a", own); err == nil {
		t.Error("a lastSeq past the bound submission's was taken")
	}
	if err := boundAgrees(ca(90), "op_a", []fv1.Submission{sub("cs-30", 30, false)}); err != nil {
		t.Errorf("a refused submission with the same chain signature counted: %v", err)
	}
	if err := boundAgrees(ca(90), "op_a", nil); err != nil {
		t.Errorf("with the bound submission unknown, the trusted anchor's word stands: %v", err)
	}
}
