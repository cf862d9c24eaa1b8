package controllers

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file schedules a Federation's anchor runs: when the next one is due, and the
// counts of operators and pending submissions that the pending threshold reads.

// dueAt is when the next anchor run is due: the time status names, if a run (with or
// without an anchor) set it after the last anchor under the current spec; else an
// interval after the last anchor, or after the Federation's creation.
func (r *FederationReconciler) dueAt(fed *fv1.Federation) time.Time {
	base := fed.CreationTimestamp.Time
	if fed.Status.LastAnchor != nil {
		base = fed.Status.LastAnchor.AnchoredAt.Time
	}
	if next := fed.Status.NextAnchorTime; next != nil && next.After(base) && fed.Status.ObservedGeneration == fed.Generation {
		return next.Time
	}
	return base.Add(fed.Spec.AnchorInterval.Duration)
}

// count sets the numbers of Active operators, of all operators, and of the accepted
// submissions above their operators' anchored seq that fed does not suspend, from the
// cache: the pending threshold reads it.
func (r *FederationReconciler) count(ctx context.Context, fed *fv1.Federation) error {
	var ops fv1.FederationOperatorList
	if err := r.List(ctx, &ops, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	fed.Status.OperatorCount, fed.Status.TotalOperators = 0, int32(len(ops.Items))
	for _, o := range ops.Items {
		if o.Status.Phase == fv1.PhaseActive {
			fed.Status.OperatorCount++
		}
	}
	if err := r.Ledger.Sync(ctx, r.Client, fed); err != nil {
		return err
	}
	_, covered, err := r.bindings(ctx, fed)
	if err != nil {
		return err
	}
	fed.Status.PendingCount = int32(countCovered(covered))
	return nil
}
