package federation

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// SubmissionSpecFor returns the spec of the Submission that records sh, an export header
// whose envelope signature verified under the key of operator id, publicKeyPEM: the header
// fields, the exact bytes the signature covers and the signature. The Submission
// controller checks all of it again (VerifySubmissionHeader and the operator's current
// key) before it accepts the submission.
func SubmissionSpecFor(id fv1.OperatorID, publicKeyPEM fv1.PublicKeyPEM, sh *protocol.SignedHeader) fv1.SubmissionSpec {
	h := &sh.Header
	return fv1.SubmissionSpec{
		OperatorID: id, ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
		FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash),
		LastHMACHash: fv1.Hash(h.LastHMACHash), ExportedAt: fv1.Timestamp(h.ExportedAt),
		SignedHeader: string(sh.Signed), Signature: fv1.Signature(sh.Signature.Value), PublicKeyPEM: publicKeyPEM,
	}
}

// SubmissionVerdict is the Submission controller's final word on a submission, as its
// status records it.
type SubmissionVerdict struct {
	// Done is true once the verdict is final; the other fields are meaningful only then.
	Done bool
	// Accepted is true when the submission passed every check and became (or was) its
	// operator's head.
	Accepted bool
	// Reason is the refusal's condition reason (fv1.Reason*), Message its text; both
	// empty for an accepted submission.
	Reason, Message string
}

// VerdictOf reads sub's verdict from its status: not Done while the controller has not
// judged it (or waits for its operator to be registered), else accepted or refused with
// the reason of the condition that refused it.
func VerdictOf(sub *fv1.Submission) SubmissionVerdict {
	if !Decided(sub) {
		return SubmissionVerdict{}
	}
	if IsAccepted(sub) {
		return SubmissionVerdict{Done: true, Accepted: true}
	}
	for _, t := range [...]fv1.ConditionType{fv1.ConditionReady, fv1.ConditionSignatureVerified, fv1.ConditionContinuityVerified} {
		if c := meta.FindStatusCondition(sub.Status.Conditions, string(t)); c != nil && c.Status == metav1.ConditionFalse {
			return SubmissionVerdict{Done: true, Reason: c.Reason, Message: c.Message}
		}
	}
	return SubmissionVerdict{Done: true, Reason: fv1.ReasonContinuityViolation, Message: "refused"}
}
