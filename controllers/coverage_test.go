package controllers

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestSplitPending checks the coverage rule the anchor run and the marker share: an anchor
// covers each participant's accepted submissions up to the one whose chain signature it
// binds, and nothing of other operators.
func TestSplitPending(t *testing.T) {
	sub := func(op string, first, last int64, accepted, anchored bool) fv1.Submission {
		s := fv1.Submission{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", op, first)}}
		s.Spec.OperatorID, s.Spec.FirstSeq, s.Spec.LastSeq = fv1.OperatorID(op), first, last
		s.Spec.ChainSignature = fv1.Hash(fmt.Sprintf("%s-cs-%d", op, last))
		s.Status.Anchored = anchored
		if accepted {
			setSubmissionCondition(&s, fv1.ConditionContinuityVerified, metav1.ConditionTrue, fv1.ReasonVerified, "test")
		}
		return s
	}
	subs := []fv1.Submission{
		sub("op_a", 1, 10, true, true),    // anchored before: neither
		sub("op_a", 11, 20, true, false),  // below the bound submission: covered
		sub("op_a", 21, 30, true, false),  // the bound submission: covered
		sub("op_a", 31, 40, true, false),  // after it: pending
		sub("op_b", 1, 5, true, false),    // an operator the anchor does not name: pending
		sub("op_c", 1, 5, false, false),   // not accepted: neither
		sub("op_d", 1, 5, true, false),    // names a signature no submission has: pending
		sub("op_e", 7, 9, true, false),    // bound: covered
		sub("op_e", 10, 12, false, false), // refused continuation: neither
	}
	last := &fv1.CrossAnchor{Spec: fv1.CrossAnchorSpec{Participants: []fv1.Participant{ // in operator ID order
		{OperatorID: "op_a", ChainSignature: "op_a-cs-30"},
		{OperatorID: "op_d", ChainSignature: "op_d-cs-99"},
		{OperatorID: "op_e", ChainSignature: "op_e-cs-9"},
	}}}
	names := func(subs []fv1.Submission) []string {
		var out []string
		for _, s := range subs {
			out = append(out, s.Name)
		}
		return out
	}
	pending, unmarked := splitPending(subs, last)
	if got, want := fmt.Sprint(names(unmarked)), "[op_a-11 op_a-21 op_e-7]"; got != want {
		t.Errorf("covered but unmarked: %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(names(pending)), "[op_a-31 op_b-1 op_d-1]"; got != want {
		t.Errorf("pending: %s, want %s", got, want)
	}
	pending, unmarked = splitPending(subs, nil)
	if got, want := len(pending), 6; got != want || len(unmarked) != 0 {
		t.Errorf("with no last anchor: %d pending and %d unmarked, want %d and 0", got, len(unmarked), want)
	}
}
