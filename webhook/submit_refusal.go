package webhook

import (
	"context"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// continuityHint is the seed's hint of a continuity violation.
const continuityHint = "Check for a missing archive or local chain rewind."

// defaultRetryPending is the Retry-After of pending_limit_exceeded when the Federation
// states no anchor interval.
const defaultRetryPending = time.Hour

// refusal is the answer to sub, which the Submission controller refused for v.Reason.
// The rule is the controller's; the API only names it in the seed's terms, with the
// operator's head (read past the cache) for the continuity answers.
func (s *Server) refusal(ctx context.Context, sub *fv1.Submission, v federation.SubmissionVerdict) error {
	id := string(sub.Spec.OperatorID)
	switch v.Reason {
	case fv1.ReasonContinuityViolation:
		head, err := s.headOf(ctx, sub.Spec.OperatorID)
		if err != nil {
			return err
		}
		return continuityError(sub, head, v.Message)
	case fv1.ReasonEntryCountRegression:
		head, err := s.headOf(ctx, sub.Spec.OperatorID)
		if err != nil {
			return err
		}
		extra := map[string]any{"got_entry_count": sub.Spec.EntryCount}
		if head != nil {
			extra["expected_min_entry_count"], extra["previous_submission_id"] = head.EntryCount, head.Submission
		}
		return &apiError{status: http.StatusUnprocessableEntity, code: "entry_count_regression", message: v.Message, extra: extra}
	case fv1.ReasonWithdrawn:
		return withdrawnError(id)
	case fv1.ReasonPendingLimitExceeded:
		return &apiError{status: http.StatusTooManyRequests, code: "pending_limit_exceeded", message: v.Message,
			retryAfter: s.anchorInterval(ctx), extra: map[string]any{"operator_id": id}}
	case fv1.ReasonSignatureInvalid, fv1.ReasonHeaderMismatch:
		return &apiError{status: http.StatusUnprocessableEntity, code: "export_verification_failed",
			message: "export verification failed: " + v.Message, extra: map[string]any{"reason": v.Reason}}
	}
	return &apiError{status: http.StatusUnprocessableEntity, code: "submission_rejected", message: v.Message,
		extra: map[string]any{"reason": v.Reason}}
}

// segmentTaken is the answer to want when another export of its segment, taken, was
// accepted: the segment is the operator's already, so want does not continue its head.
func (s *Server) segmentTaken(ctx context.Context, want, taken *fv1.Submission) error {
	head, err := s.headOf(ctx, want.Spec.OperatorID)
	if err != nil {
		return err
	}
	e := continuityError(want, head, "another export of seq "+itoa(want.Spec.FirstSeq)+" onward was accepted as "+
		taken.Name+"; this one differs from it")
	e.extra["conflicting_submission_id"] = taken.Name
	return e
}

// continuityError is the seed's 422 continuity_violation for sub against head, with the
// expected and sent first_seq added.
func continuityError(sub *fv1.Submission, head *fv1.SubmissionHead, msg string) *apiError {
	extra := map[string]any{
		"got_first_prev_hash": string(sub.Spec.FirstPrevHash), "got_first_seq": sub.Spec.FirstSeq, "hint": continuityHint,
		"expected_first_prev_hash": nil, "previous_submission_id": nil,
	}
	if head != nil {
		extra["expected_first_prev_hash"], extra["previous_submission_id"] = string(head.LastHMACHash), head.Submission
		extra["expected_first_seq"] = head.LastSeq + 1
	}
	return &apiError{status: http.StatusUnprocessableEntity, code: "continuity_violation", message: msg, extra: extra}
}

// headOf is the head of operator id, read past the cache (federation.Head): the last
// submission the controller accepted, nil before the first.
func (s *Server) headOf(ctx context.Context, id fv1.OperatorID) (*fv1.SubmissionHead, error) {
	o, err := s.cachedOperator(ctx, string(id))
	if err != nil {
		return nil, err
	}
	var fo fv1.FederationOperator
	if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(o), &fo); err != nil {
		return nil, err
	}
	return federation.Head(ctx, s.apiReader, &fo)
}

// anchorInterval is how often the served Federation anchors, from the cache.
func (s *Server) anchorInterval(ctx context.Context) time.Duration {
	var fed fv1.Federation
	if err := s.client.Get(ctx, s.federation, &fed); err != nil || fed.Spec.AnchorInterval.Duration <= 0 {
		return defaultRetryPending
	}
	return fed.Spec.AnchorInterval.Duration
}
