package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// HeadOf returns the newest accepted state of op's chain, which its next submission must
// continue: of op's status.head (what the FederationOperator controller recorded, which
// outlives the Submission it names) and the accepted Submissions of own, the one with
// the highest lastSeq; nil when there is none. An operator's accepted submissions form
// one chain (SubmissionName), so the newest is the head. The result is a copy.
func HeadOf(op *fv1.FederationOperator, own []fv1.Submission) *fv1.SubmissionHead {
	var head *fv1.SubmissionHead
	if op.Status.Head != nil {
		h := *op.Status.Head
		head = &h
	}
	for i := range own {
		s := &own[i]
		if s.Spec.OperatorID != op.Status.OperatorID || !IsAccepted(s) {
			continue
		}
		if head == nil || s.Spec.LastSeq > head.LastSeq {
			head = HeadFor(s)
		}
	}
	return head
}

// HeadFor is the head record of accepted s.
func HeadFor(s *fv1.Submission) *fv1.SubmissionHead {
	at, _ := AcceptedAt(s)
	return &fv1.SubmissionHead{Submission: s.Name, LastSeq: s.Spec.LastSeq, LastHMACHash: s.Spec.LastHMACHash,
		EntryCount: s.Spec.EntryCount, ChainSignature: s.Spec.ChainSignature, UID: string(s.UID), AcceptedAt: metav1.NewTime(at)}
}
