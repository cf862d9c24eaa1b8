package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// This file is coverage: marking the submissions a CrossAnchor covers.
//
// Each participant of a CrossAnchor records the lastSeq of the submission whose chain
// signature it binds; a trusted anchor covers every accepted submission of that operator
// whose lastSeq is at or below it (federation.Covers), since an operator's accepted
// submissions form one chain. A submission is anchored by the first trusted anchor, in
// name order (the order anchors are made in), that covers it, so each is anchored exactly
// once however often it is looked at.
//
// That follows from the anchors alone, and an anchor run reads it from them
// (federation.Ledger): nothing waits for the mark. The Submission controller writes it
// into a Submission's status for readers (kubectl, the API), once the CrossAnchor's
// arrival in the cache wakes it for the pending submissions of its participants.

// markIfCovered marks the accepted, unmarked sub with the first trusted CrossAnchor that
// covers it, if any: a seed-form anchor that lists its operator, or a Merkle-form one
// whose checked tree holds its operator's leaf.
func (r *SubmissionReconciler) markIfCovered(ctx context.Context, sub *fv1.Submission) error {
	var anchors []fv1.CrossAnchor
	for _, key := range []string{string(sub.Spec.OperatorID), federation.MerkleIndexKey} {
		var list fv1.CrossAnchorList
		// Read-only and possibly large (a participant per operator): not copied out of the cache.
		if err := r.List(ctx, &list, client.InNamespace(sub.Namespace),
			client.MatchingFields{federation.ParticipantIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		anchors = append(anchors, list.Items...)
	}
	anchors = slices.DeleteFunc(anchors, func(ca fv1.CrossAnchor) bool { return !federation.IsMerkle(&ca) && !federation.Covers(&ca, sub) })
	if len(anchors) == 0 {
		return nil
	}
	fed, err := federation.NamespaceFederation(ctx, r.Client, sub.Namespace)
	if err != nil {
		return err
	}
	slices.SortFunc(anchors, func(a, b fv1.CrossAnchor) int { return strings.Compare(a.Name, b.Name) })
	for i := range anchors {
		ca := &anchors[i]
		if err := r.Trust.Verify(fed, ca); err != nil {
			continue // the CrossAnchor controller rejects it and says why
		}
		if federation.IsMerkle(ca) {
			p, ok, err := r.Merkle.ParticipantIn(ctx, fed, ca, sub.Spec.OperatorID)
			if err != nil {
				return err
			}
			if !ok || sub.Spec.LastSeq > p.LastSeq {
				continue
			}
		}
		if err := markAnchored(ctx, r.Client, sub, ca); err != nil {
			return err
		}
		if r.Hooks.SubmissionMarked != nil {
			r.Hooks.SubmissionMarked(ca)
		}
		return nil
	}
	return nil
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

// coveredSubmissions maps a new CrossAnchor to the pending submissions of its
// participants, for the marker: a Merkle-form anchor's from its checked tree, once the
// federation's.
func (r *SubmissionReconciler) coveredSubmissions(ctx context.Context, o client.Object) []reconcile.Request {
	ca := o.(*fv1.CrossAnchor)
	var reqs []reconcile.Request
	add := func(operator fv1.OperatorID, lastSeq int64) {
		var subs fv1.SubmissionList
		if err := r.List(ctx, &subs, client.InNamespace(ca.Namespace), client.MatchingFields{federation.PendingIndex: string(operator)},
			client.UnsafeDisableDeepCopy); err != nil {
			logf.FromContext(ctx).Error(err, "List pending submissions", "operatorID", operator)
			return
		}
		for i := range subs.Items {
			if s := &subs.Items[i]; s.Spec.LastSeq <= lastSeq {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
			}
		}
	}
	if !federation.IsMerkle(ca) {
		for _, p := range ca.Spec.Participants {
			add(p.OperatorID, p.LastSeq)
		}
		return reqs
	}
	fed, err := anchorFederation(ctx, r.Client, ca)
	if err == nil {
		err = r.Trust.Verify(fed, ca)
	}
	if err != nil {
		return nil // not the federation's, or its Federation is gone: nothing to mark
	}
	tree, err := r.Merkle.Tree(ctx, fed, ca)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Read the leaves of a Merkle-form anchor", "anchor", ca.Name)
		return nil
	}
	for _, l := range tree.Leaves() {
		add(fv1.OperatorID(l.OperatorID), l.LastSeq)
	}
	return reqs
}

// anchorMade passes the creation of a CrossAnchor after the manager started: on a start
// every Submission is reconciled anyway.
var anchorMade = predicate.Funcs{
	CreateFunc:  func(e crevent.CreateEvent) bool { return !e.IsInInitialList },
	UpdateFunc:  func(crevent.UpdateEvent) bool { return false },
	DeleteFunc:  func(crevent.DeleteEvent) bool { return false },
	GenericFunc: func(crevent.GenericEvent) bool { return false },
}
