package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// anchorLogWait is how long POST /federation/anchor waits, once the anchor exists, for the
// log to record it (within the overall wait), before it answers with null log members.
const anchorLogWait = 10 * time.Second

// awaitAnchor waits, through the cache and at most the register timeout, until the
// Federation's status records request id as handled, and returns the answer: the seed's
// no-op when the run made no anchor, else the anchor, which must be one the federation
// made (federation.TrustAnchor), with its log members once its log leg verifies or
// anchorLogWait has passed. Past the timeout with no record it answers 504
// anchor_pending.
func (s *Server) awaitAnchor(parent context.Context, fed *fv1.Federation, id string) (any, error) {
	ctx, cancel := context.WithTimeout(parent, s.regTimeout)
	defer cancel()
	t := time.NewTicker(registrationPoll)
	defer t.Stop()
	var logDeadline time.Time
	for {
		ans, done, err := s.anchorAnswer(ctx, fed.Namespace, id, &logDeadline)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if done {
			return ans, nil
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return nil, err
			}
			if ans != nil {
				return ans, nil // the anchor is made; its log leg is still pending
			}
			return nil, &apiError{status: http.StatusGatewayTimeout, code: "anchor_pending",
				message: "the leader has not run the anchor yet; it still will: status.anchorRequest of the Federation records it under request_id",
				extra:   map[string]any{"request_id": id}}
		case <-t.C:
		}
	}
}

// anchorAnswer reads the Federation from the cache and, once its status records request
// id, the answer (nil before). done says the answer is final: a no-op, or an anchor whose
// log leg verified or whose logDeadline (set on first sight of the anchor) passed.
func (s *Server) anchorAnswer(ctx context.Context, namespace, id string, logDeadline *time.Time) (any, bool, error) {
	var fed fv1.Federation
	if err := s.client.Get(ctx, s.federation, &fed); err != nil {
		return nil, false, err
	}
	req := federation.HandledAnchorRequest(&fed, id)
	if req == nil {
		return nil, false, nil
	}
	if req.AnchorID == "" {
		reason := req.Reason
		if reason == fv1.ReasonNotEnoughParticipants {
			reason = "not enough participants" // the seed's words
		}
		return anchorNoOpResponse{Status: "no-op", Reason: reason, Message: req.Message, RequestID: id}, true, nil
	}
	ids := req.AnchorIDs
	if len(ids) == 0 {
		ids = []fv1.AnchorID{req.AnchorID}
	}
	var ans anchorNowResponse
	verified := true
	for i, anchorID := range ids {
		ca, err := s.requestedAnchor(ctx, &fed, namespace, anchorID)
		if err != nil || ca == nil {
			return nil, false, err // nil, nil: not in the cache yet
		}
		partVerified := s.logLegVerified(ctx, &fed, ca)
		verified = verified && partVerified
		part := newAnchorNowResponse(ca, id, int(req.SubmissionsAnchored), partVerified)
		if len(ids) > 1 {
			ans.Anchors = append(ans.Anchors, anchorNowPart{AnchorID: part.AnchorID, CrossAnchorHash: part.CrossAnchorHash,
				ParticipantCount: federation.ParticipantCount(ca), TLogLogIndex: part.TLogLogIndex})
		}
		if i == len(ids)-1 {
			part.Anchors = ans.Anchors
			ans = part
		}
	}
	if verified {
		return ans, true, nil
	}
	now := s.now()
	if logDeadline.IsZero() {
		*logDeadline = now.Add(anchorLogWait)
	}
	return ans, !now.Before(*logDeadline), nil
}

// requestedAnchor reads the anchor id that a request's record names from the cache (nil,
// nil when the cache does not hold it yet) and requires that the federation made it:
// status names it, and status is no evidence.
func (s *Server) requestedAnchor(ctx context.Context, fed *fv1.Federation, namespace string, id fv1.AnchorID) (*fv1.CrossAnchor, error) {
	var ca fv1.CrossAnchor
	err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: string(id)}, &ca)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := federation.TrustAnchor(fed, &ca); err != nil {
		return nil, fmt.Errorf("status.anchorRequest names an anchor the federation did not make: %w", err)
	}
	return &ca, nil
}
