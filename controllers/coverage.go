package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file says which submissions a CrossAnchor covers, and marks them. The CrossAnchor
// is the record: it names, per operator, the chain_signature of the latest submission it
// binds, and so covers that operator's accepted submissions up to that one's last_seq.
// A Submission's status.anchored is a projection of that record, written by the
// Submission controller after the anchor run, in parallel and in the background, so an
// anchor run costs one object write however many submissions it covers.
//
// Two rules keep every submission in exactly one anchor:
//   - a run first marks, itself, any submission the last anchor covers that is still
//     unmarked (so only the last anchor can ever have unmarked submissions), and
//   - a submission is marked with the first anchor, in name order, that covers it.
//
// Both the run and the marker decide coverage with covers, on the same data.

// markParallelism is how many submissions an anchor run marks at once, when it finds
// some the marker has not reached.
const markParallelism = 8

// participantIndex indexes CrossAnchors by the operator IDs of their participants.
const participantIndex = "spec.participants.operatorID"

// chainSignatureOf returns the chain_signature ca binds for operator, if it takes part.
// Participants are in hash order, by operator ID.
func chainSignatureOf(ca *fv1.CrossAnchor, operator fv1.OperatorID) (fv1.Hash, bool) {
	i, ok := slices.BinarySearchFunc(ca.Spec.Participants, operator, func(p fv1.Participant, id fv1.OperatorID) int {
		return strings.Compare(string(p.OperatorID), string(id))
	})
	if !ok {
		return "", false
	}
	return ca.Spec.Participants[i].ChainSignature, true
}

// lastSeqFunc returns the last_seq of operator's submission with chain signature cs.
type lastSeqFunc func(operator fv1.OperatorID, cs fv1.Hash) (int64, bool)

// covers reports whether ca covers the accepted submission s: ca binds a submission of
// s's operator that ends at or after s.
func covers(ca *fv1.CrossAnchor, s *fv1.Submission, lastSeq lastSeqFunc) bool {
	cs, ok := chainSignatureOf(ca, s.Spec.OperatorID)
	if !ok {
		return false
	}
	if cs == s.Spec.ChainSignature {
		return true
	}
	last, ok := lastSeq(s.Spec.OperatorID, cs)
	return ok && s.Spec.LastSeq <= last
}

// lastSeqIn is a lastSeqFunc over subs.
func lastSeqIn(subs []fv1.Submission) lastSeqFunc {
	type key struct {
		op fv1.OperatorID
		cs fv1.Hash
	}
	last := make(map[key]int64, len(subs))
	for i := range subs {
		last[key{subs[i].Spec.OperatorID, subs[i].Spec.ChainSignature}] = subs[i].Spec.LastSeq
	}
	return func(op fv1.OperatorID, cs fv1.Hash) (int64, bool) {
		n, ok := last[key{op, cs}]
		return n, ok
	}
}

// isAccepted reports whether s passed every check and so waits for, or has, an anchor.
func isAccepted(s *fv1.Submission) bool {
	return meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionContinuityVerified))
}

// splitPending divides the accepted, unmarked submissions of subs into those last covers
// (unmarked: the marker has yet to reach them) and the pending rest. last may be nil.
func splitPending(subs []fv1.Submission, last *fv1.CrossAnchor) (pending, unmarked []fv1.Submission) {
	lastSeq := lastSeqIn(subs)
	for i := range subs {
		s := &subs[i]
		switch {
		case !isAccepted(s) || s.Status.Anchored:
		case last != nil && covers(last, s, lastSeq):
			unmarked = append(unmarked, *s)
		default:
			pending = append(pending, *s)
		}
	}
	return pending, unmarked
}

// markIfCovered marks the accepted, unmarked sub with the first CrossAnchor that covers
// it, if any. It reports whether it marked.
func (r *SubmissionReconciler) markIfCovered(ctx context.Context, sub *fv1.Submission) (bool, error) {
	var anchors fv1.CrossAnchorList
	// Read-only and possibly large (a participant per operator): not copied out of the cache.
	if err := r.List(ctx, &anchors, client.InNamespace(sub.Namespace),
		client.MatchingFields{participantIndex: string(sub.Spec.OperatorID)}, client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	if len(anchors.Items) == 0 {
		return false, nil
	}
	slices.SortFunc(anchors.Items, func(a, b fv1.CrossAnchor) int { return strings.Compare(a.Name, b.Name) })
	var own fv1.SubmissionList
	if err := r.List(ctx, &own, client.InNamespace(sub.Namespace), client.MatchingFields{operatorIDIndex: string(sub.Spec.OperatorID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	lastSeq := lastSeqIn(own.Items)
	for i := range anchors.Items {
		ca := &anchors.Items[i]
		if !covers(ca, sub, lastSeq) {
			continue
		}
		if err := markAnchored(ctx, r.Client, sub, ca); err != nil {
			return false, err
		}
		halfMarkedFailpoint(ca)
		return true, nil
	}
	return false, nil
}

// markAnchored marks sub anchored by ca: a merge patch of the status alone, with the
// resourceVersion, so that a submission changed meanwhile is read again rather than
// overwritten.
func markAnchored(ctx context.Context, c client.Client, sub *fv1.Submission, ca *fv1.CrossAnchor) error {
	base := sub.DeepCopy()
	sub.Status.Anchored, sub.Status.AnchorRef = true, ca.Spec.AnchorID
	setSubmissionCondition(sub, fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "bound into "+ca.Name)
	if err := c.Status().Patch(ctx, sub, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("mark submission %s anchored: %w", sub.Name, err)
	}
	return nil
}

// markAll marks subs anchored by ca, markParallelism at a time.
func markAll(ctx context.Context, c client.Client, subs []fv1.Submission, ca *fv1.CrossAnchor) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(markParallelism)
	for i := range subs {
		g.Go(func() error { return markAnchored(gctx, c, &subs[i], ca) })
	}
	return g.Wait()
}

// marked counts the submissions this process marked, for FailAfterHalfMarked.
var marked atomic.Int64

// halfMarkedFailpoint exits, when FailpointEnv asks for it, once this process has marked
// half as many submissions as ca has participants.
func halfMarkedFailpoint(ca *fv1.CrossAnchor) {
	if os.Getenv(FailpointEnv) == FailAfterHalfMarked && marked.Add(1) >= int64(max(len(ca.Spec.Participants)/2, 1)) {
		failpoint(FailAfterHalfMarked)
	}
}

// lastAnchorSubmissions maps a Federation to the accepted, unmarked submissions its last
// anchor covers, for the marker. Marking starts from the Federation's status rather than
// from the CrossAnchor's creation, so that the run's own status write is not queued
// behind thousands of marks.
func (r *SubmissionReconciler) lastAnchorSubmissions(ctx context.Context, o client.Object) []reconcile.Request {
	fed := o.(*fv1.Federation)
	if fed.Status.LastAnchor == nil {
		return nil
	}
	var lists []fv1.SubmissionList
	ca, err := lastAnchor(ctx, r.Client, fed)
	if err == nil {
		lists = make([]fv1.SubmissionList, len(ca.Spec.Participants))
		for i, p := range ca.Spec.Participants {
			err = errors.Join(err, r.List(ctx, &lists[i], client.InNamespace(ca.Namespace),
				client.MatchingFields{operatorIDIndex: string(p.OperatorID)}, client.UnsafeDisableDeepCopy))
		}
	}
	if err != nil {
		// The anchor is not in the cache yet: every unmarked submission of the namespace
		// is looked at, and waits for it (see cacheBehind).
		lists = make([]fv1.SubmissionList, 1)
		if err := r.List(ctx, &lists[0], client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
	}
	var reqs []reconcile.Request
	for _, subs := range lists {
		for i := range subs.Items {
			if s := &subs.Items[i]; isAccepted(s) && !s.Status.Anchored {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
			}
		}
	}
	return reqs
}

// cacheLag bounds how long the cache may take to hold a new anchor: a last anchor made
// longer ago than this that the cache does not hold is gone (its recordFinalizer was
// removed by hand), and waiting for it would requeue the unmarked submissions forever.
const cacheLag = time.Minute

// cacheBehind reports whether a Federation in namespace names a last anchor, made less
// than cacheLag ago, that the cache does not hold yet: a submission no cached anchor
// covers must then be looked at again.
func (r *SubmissionReconciler) cacheBehind(ctx context.Context, namespace string) (bool, error) {
	var feds fv1.FederationList
	if err := r.List(ctx, &feds, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	for i := range feds.Items {
		fed := &feds.Items[i]
		_, err := lastAnchor(ctx, r.Client, fed)
		switch {
		case apierrors.IsNotFound(err) && r.now().Sub(fed.Status.LastAnchor.AnchoredAt.Time) < cacheLag:
			return true, nil
		case err != nil && !apierrors.IsNotFound(err):
			return false, err
		}
	}
	return false, nil
}

// lastAnchorChanged passes a Federation's creation (as on every start) and the updates
// that change its last anchor.
var lastAnchorChanged = predicate.Funcs{
	UpdateFunc: func(e crevent.UpdateEvent) bool {
		anchorID := func(o client.Object) fv1.AnchorID {
			if last := o.(*fv1.Federation).Status.LastAnchor; last != nil {
				return last.AnchorID
			}
			return ""
		}
		return anchorID(e.ObjectOld) != anchorID(e.ObjectNew)
	},
	DeleteFunc: func(crevent.DeleteEvent) bool { return false },
}
