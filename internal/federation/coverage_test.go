package federation

import (
	"testing"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
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
		if got := Covers(ca, s); got != c.want {
			t.Errorf("covers %s through %d: %v, want %v", c.op, c.last, got, c.want)
		}
	}
}
