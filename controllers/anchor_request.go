package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// This file handles anchor requests: the Kubernetes request/handled pattern (as Flux's
// requestedAt annotation and lastHandledReconcileAt). Whoever wants an anchor run now
// (POST /federation/anchor on any replica, or `kubectl annotate`) writes a request ID
// into the Federation's AnchorRequestAnnotation; the leader's Federation controller sees
// an ID other than status.anchorRequest.id, runs an anchor at once, and records the
// request in the same status write as the anchor. The run stamps the request's ID on the
// CrossAnchor it creates, so that a run stopped between that Create and the status write
// is recorded as the request's by adoptAnchors instead of being run again: each request
// gets exactly one run.

// errRequestAdopted means the anchor request a run was for turned out to be handled
// already, by a run that stopped after creating its CrossAnchor: nothing is run again.
var errRequestAdopted = errors.New("the anchor request was handled by an earlier run")

// anchorRequest returns the request a run is owed now, or "". An annotation that is not
// a valid ID is reported in a Warning Event and otherwise ignored.
func (r *FederationReconciler) anchorRequest(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) string {
	id, ok := fed.Annotations[fv1.AnchorRequestAnnotation]
	if ok && !federation.ValidAnchorRequestID(id) {
		logf.FromContext(ctx).Info("Ignored an invalid anchor request", "annotation", fv1.AnchorRequestAnnotation)
		*evs = append(*evs, federationEvent{event{corev1.EventTypeWarning, "InvalidAnchorRequest", "Anchor",
			fmt.Sprintf("annotation %s is not 1 to 128 characters of [A-Za-z0-9._:+-]; no anchor run", fv1.AnchorRequestAnnotation)}, nil})
		return ""
	}
	return federation.PendingAnchorRequest(fed)
}

// recordRequest writes into fed's status that request id was handled at now: by the
// run that made anchors, which bind covered submissions, or, with no anchors, by a run
// that made none for cause.
func recordRequest(fed *fv1.Federation, id string, anchors []*fv1.CrossAnchor, covered int, cause error, now time.Time) {
	req := &fv1.AnchorRequest{ID: id, HandledAt: metav1.NewTime(now)}
	if len(anchors) > 0 {
		last, operators := anchors[len(anchors)-1], 0
		for _, ca := range anchors {
			operators += federation.ParticipantCount(ca)
			if len(anchors) > 1 {
				req.AnchorIDs = append(req.AnchorIDs, ca.Spec.AnchorID)
			}
		}
		req.AnchorID, req.SubmissionsAnchored, req.Reason = last.Spec.AnchorID, int32(covered), fv1.ReasonAnchored
		req.Message = fmt.Sprintf("anchored %d submissions of %d operators in %s", covered, operators, last.Name)
		if len(anchors) > 1 {
			req.Message = fmt.Sprintf("anchored %d submissions of %d operators in %d anchors, %s to %s", covered, operators, len(anchors),
				anchors[0].Name, last.Name)
		}
	} else {
		req.Reason, req.Message = fv1.ReasonNotEnoughParticipants, cause.Error()
	}
	fed.Status.AnchorRequest = req
	fed.Status.RecentAnchorRequests = append([]fv1.AnchorRequest{*req}, fed.Status.RecentAnchorRequests...)[:min(len(fed.Status.RecentAnchorRequests)+1, maxRecentRequests)]
}

// maxRecentRequests is how many handled requests status.recentAnchorRequests keeps.
const maxRecentRequests = 16

// adoptRequest records the request stamped on ca, a trusted anchor just adopted as fed's
// last, as handled by it, unless status records it already, or ca is not the last
// anchor of its run: then the request is run again, for the operators not yet bound.
func adoptRequest(fed *fv1.Federation, ca *fv1.CrossAnchor, now time.Time) {
	id := ca.Annotations[fv1.AnchorRequestIDAnnotation]
	if !federation.ValidAnchorRequestID(id) || federation.AnchorRequestHandled(fed, id) || !lastPart(ca) {
		return
	}
	covered, err := strconv.Atoi(ca.Annotations[fv1.AnchorSubmissionsAnnotation])
	if err != nil || covered < 0 {
		covered = 0
	}
	recordRequest(fed, id, []*fv1.CrossAnchor{ca}, covered, nil, now)
}
