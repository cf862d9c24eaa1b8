package controllers

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// lacksTimestamp reports whether ca is in the log without a signed entry timestamp in
// its status: the embedded log logged it before it signed entry timestamps (issue 14,
// hole 5). Its receipts need one, so the entry is read back once.
func lacksTimestamp(ca *fv1.CrossAnchor) bool {
	return ca.Status.Phase == fv1.PhaseAnchored && ca.Status.LogEntry != nil && ca.Status.SignedEntryTimestamp == ""
}

// refreshEntry reads ca's entry back from fed's log, which gives a signed entry timestamp
// now, and records it with a fresh proof. The entry must hold the body ca's status
// records and verify under the log's key; ca stays Anchored whatever happens.
func (r *CrossAnchorReconciler) refreshEntry(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (ctrl.Result, error) {
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err != nil {
		return ctrl.Result{}, err
	}
	e, err := log.Entry(ctx, ca.Status.LogEntry.LogIndex)
	if err != nil {
		return ctrl.Result{}, err
	}
	if e.Bundle.Body != ca.Status.EntryBody {
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("CrossAnchor %s: the log holds another body at index %d", ca.Name, e.Index))
	}
	if _, err := log.Verify(ctx, &e.Bundle); err != nil {
		return ctrl.Result{}, fmt.Errorf("CrossAnchor %s: the log's entry %d: %w", ca.Name, e.Index, err)
	}
	r.record(ca, e)
	return ctrl.Result{}, r.Status().Update(ctx, ca)
}
