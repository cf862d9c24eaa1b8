package federation

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is a Submission's verdict: its name, its signed header, and its continuity
// with its operator's head.

// Decided reports whether sub has its final verdict: refused, or accepted.
func Decided(sub *fv1.Submission) bool {
	if ready := meta.FindStatusCondition(sub.Status.Conditions, string(fv1.ConditionReady)); ready != nil {
		return ready.Reason != fv1.ReasonOperatorUnknown
	}
	// Verdicts written before Ready was.
	sig := meta.FindStatusCondition(sub.Status.Conditions, string(fv1.ConditionSignatureVerified))
	if sig != nil && sig.Status == metav1.ConditionFalse && sig.Reason != fv1.ReasonOperatorUnknown {
		return true
	}
	return meta.FindStatusCondition(sub.Status.Conditions, string(fv1.ConditionContinuityVerified)) != nil
}

// VerifySubmissionHeader returns the reason, the spec field at fault and a message when
// s.signedHeader is not signed by pub (s.signature; field "signedHeader"), or a field of s
// is not the header's (ReasonHeaderMismatch; the message states both values); all ""
// when it verifies and matches. Whether pub is the operator's current key is the
// Submission controller's to check, once the operator is registered.
func VerifySubmissionHeader(s *fv1.SubmissionSpec, pub ed25519.PublicKey) (reason, field, msg string) {
	h, err := protocol.VerifySignedHeader([]byte(s.SignedHeader), string(s.Signature), pub)
	if err != nil {
		return fv1.ReasonSignatureInvalid, "signedHeader", fmt.Sprintf("signedHeader: %v", err)
	}
	for _, c := range [...]struct{ field, spec, header string }{
		{"chainSignature", string(s.ChainSignature), h.ChainSignature},
		{"entryCount", strconv.FormatInt(s.EntryCount, 10), strconv.FormatInt(h.EntryCount, 10)},
		{"firstSeq", strconv.FormatInt(s.FirstSeq, 10), strconv.FormatInt(h.FirstSeq, 10)},
		{"lastSeq", strconv.FormatInt(s.LastSeq, 10), strconv.FormatInt(h.LastSeq, 10)},
		{"firstPrevHash", string(s.FirstPrevHash), h.FirstPrevHash},
		{"lastHMACHash", string(s.LastHMACHash), h.LastHMACHash},
		{"exportedAt", string(s.ExportedAt), h.ExportedAt},
	} {
		if c.spec != c.header {
			return fv1.ReasonHeaderMismatch, c.field, fmt.Sprintf("spec.%s is %s, the signed header says %s", c.field, c.spec, c.header)
		}
	}
	return "", "", ""
}

// CheckContinuity returns the reason and message when sub does not follow head.
func CheckContinuity(sub *fv1.Submission, head *fv1.SubmissionHead) (reason, msg string) {
	if head == nil {
		return "", ""
	}
	s := &sub.Spec
	switch {
	case s.FirstSeq != head.LastSeq+1:
		return fv1.ReasonContinuityViolation, fmt.Sprintf("first_seq is %d, want %d: %s ended at seq %d",
			s.FirstSeq, head.LastSeq+1, head.Submission, head.LastSeq)
	case s.FirstPrevHash != head.LastHMACHash:
		return fv1.ReasonContinuityViolation, fmt.Sprintf("first_prev_hash is %s, want %s, the last hmac_hash of %s",
			s.FirstPrevHash, head.LastHMACHash, head.Submission)
	case s.EntryCount < head.EntryCount:
		return fv1.ReasonEntryCountRegression, fmt.Sprintf("entry_count %d is below %d, that of %s",
			s.EntryCount, head.EntryCount, head.Submission)
	}
	return "", ""
}

// SubmissionName is the name of the Submission that records operator id's export
// starting at firstSeq: sub-<id without "op_">-<firstSeq>. Every Submission has it (the
// Submission controller refuses any other), so two exports of one segment meet at the
// API server, and of two that continue one head only one can exist: the operator's
// accepted submissions form one chain without forks by construction.
func SubmissionName(id fv1.OperatorID, firstSeq int64) string {
	return "sub-" + strings.TrimPrefix(string(id), "op_") + "-" + strconv.FormatInt(firstSeq, 10)
}

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

// Head returns op's head as a reader finds it through names, without listing: from the
// head op's status records (recorded a moment after the verdicts that move it) it
// follows the accepted Submissions named after the next seq (SubmissionName), reading
// one a step from c, until there is none; from seq 1 when status records none. nil when
// op has accepted nothing. HeadOf, which lists, is what a verdict is checked against.
func Head(ctx context.Context, c client.Reader, op *fv1.FederationOperator) (*fv1.SubmissionHead, error) {
	var head *fv1.SubmissionHead
	next := int64(1)
	if op.Status.Head != nil {
		h := *op.Status.Head
		head, next = &h, h.LastSeq+1
	}
	for {
		var s fv1.Submission
		err := c.Get(ctx, client.ObjectKey{Namespace: op.Namespace, Name: SubmissionName(op.Status.OperatorID, next)}, &s,
			client.UnsafeDisableDeepCopy)
		if apierrors.IsNotFound(err) {
			return head, nil
		}
		if err != nil {
			return nil, err
		}
		if s.Spec.OperatorID != op.Status.OperatorID || !IsAccepted(&s) {
			return head, nil
		}
		head, next = HeadFor(&s), s.Spec.LastSeq+1
	}
}
