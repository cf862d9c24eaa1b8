package controllers

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// Which Federation changes reconcile which operators. A Federation decides an operator's
// suspension and approval, and nothing else of it; its status is written on every anchor
// run and count change, so mapping each write to every operator of the namespace cost
// one reconcile per operator per write (2,000 operators: about 2,000 reconciles a
// write, docs/BENCHMARKS.md). Only the namespace's Federation (the oldest,
// federation.NamespaceFederation) counts: an update of it reconciles the operators whose
// suspension or approval entries differ between the old and the new object, nothing
// else; a create or delete that changes which Federation is the namespace's reconciles
// every operator of the namespace, and one that does not reconciles none.

// federationEvents is the handler of the FederationOperator controller's Federation watch.
func (r *FederationOperatorReconciler) federationEvents() handler.Funcs {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e ctrlevent.CreateEvent, q queue) {
			if r.isNamespaceFederation(ctx, e.Object) {
				r.enqueue(ctx, e.Object.GetNamespace(), nil, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e ctrlevent.UpdateEvent, q queue) {
			old, oldOK := e.ObjectOld.(*fv1.Federation)
			cur, curOK := e.ObjectNew.(*fv1.Federation)
			if !oldOK || !curOK || !r.isNamespaceFederation(ctx, cur) {
				return
			}
			if changed := changedOperatorIDs(old, cur); len(changed) > 0 {
				r.enqueue(ctx, cur.Namespace, changed, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e ctrlevent.DeleteEvent, q queue) {
			// The cache no longer holds it: it was the namespace's when it was older than
			// the one that is now, or when none is left.
			now, err := federation.NamespaceFederation(ctx, r.Client, e.Object.GetNamespace())
			if err != nil || olderFederation(e.Object, now) {
				r.enqueue(ctx, e.Object.GetNamespace(), nil, q)
			}
		},
	}
}

// isNamespaceFederation reports whether o is, in the cache, its namespace's Federation.
func (r *FederationOperatorReconciler) isNamespaceFederation(ctx context.Context, o client.Object) bool {
	fed, err := federation.NamespaceFederation(ctx, r.Client, o.GetNamespace())
	return err == nil && fed.UID == o.GetUID()
}

// olderFederation reports whether a comes before b in federation.NamespaceFederation's
// order: by creationTimestamp, then name.
func olderFederation(a, b client.Object) bool {
	at, bt := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !at.Equal(&bt) {
		return at.Before(&bt)
	}
	return a.GetName() < b.GetName()
}

// enqueue adds to q the operators of namespace whose status.operatorID is in ids, or
// every operator of namespace when ids is nil.
func (r *FederationOperatorReconciler) enqueue(ctx context.Context, namespace string, ids map[fv1.OperatorID]bool,
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var ops fv1.FederationOperatorList
	if err := r.List(ctx, &ops, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range ops.Items {
		if ids == nil || ids[ops.Items[i].Status.OperatorID] {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ops.Items[i])})
		}
	}
}

// changedOperatorIDs returns the operator IDs whose suspension or approval entries
// (spec.suspendedOperators, status.apiSuspensions, spec.approvedOperators,
// status.apiApprovals, reasons included) differ between old and cur. It is linear in the
// lists' lengths.
func changedOperatorIDs(old, cur *fv1.Federation) map[fv1.OperatorID]bool {
	before, after := standings(old), standings(cur)
	changed := map[fv1.OperatorID]bool{}
	for id, s := range before {
		if after[id] != s {
			changed[id] = true
		}
	}
	for id, s := range after {
		if before[id] != s {
			changed[id] = true
		}
	}
	return changed
}

// standings describes, for each operator fed's lists name, what they say of it, always in
// the same order: equal descriptions mean an equal suspension and approval.
func standings(fed *fv1.Federation) map[fv1.OperatorID]string {
	out := map[fv1.OperatorID]string{}
	add := func(id fv1.OperatorID, what string) { out[id] += what + "\x00" }
	for _, s := range fed.Spec.SuspendedOperators {
		add(s.OperatorID, "suspended by gitops: "+s.Reason)
	}
	for _, s := range fed.Status.APISuspensions {
		add(s.OperatorID, "suspended by api: "+s.Reason)
	}
	for _, a := range fed.Spec.ApprovedOperators {
		add(a.OperatorID, "approved by gitops")
	}
	for _, a := range fed.Status.APIApprovals {
		add(a.OperatorID, "approved by api")
	}
	return out
}
