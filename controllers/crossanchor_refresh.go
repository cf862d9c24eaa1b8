package controllers

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// lacksTimestamp reports whether ca is in the log without a signed entry timestamp in
// its status: the embedded log logged it before it signed entry timestamps (issue 14,
// hole 5). Its receipts need one, so the entry is read back once. A Rekor v2 entry has
// RFC 3161 timestamps instead, taken at upload.
func lacksTimestamp(ca *fv1.CrossAnchor) bool {
	return ca.Status.Phase == fv1.PhaseAnchored && ca.Status.LogEntry != nil && ca.Status.SignedEntryTimestamp == "" &&
		len(ca.Status.RFC3161Timestamps) == 0
}

// refreshEntry reads ca's entry back from fed's log, which gives a signed entry timestamp
// now, and records it with a fresh proof. The entry must hold the body ca's status
// records and verify under the log's key; ca stays Anchored whatever happens.
func (r *CrossAnchorReconciler) refreshEntry(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (ctrl.Result, error) {
	e, err := r.readBack(ctx, fed, ca)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.record(ca, e)
	return ctrl.Result{}, r.Status().Update(ctx, ca)
}

// lacksWitnesses reports whether ca is in the log but its proof's checkpoint lacks the
// cosignatures fed's witness policy requires: it was logged before the witnesses cosigned
// that checkpoint, or while too few of them answered.
func lacksWitnesses(fed *fv1.Federation, ca *fv1.CrossAnchor) bool {
	if ca.Status.Phase != fv1.PhaseAnchored || ca.Status.LogEntry == nil || ca.Status.InclusionProof == nil {
		return false
	}
	policy, err := federation.WitnessPolicy(fed)
	if err != nil || policy == nil {
		return false
	}
	v, err := policy.Check([]byte(ca.Status.InclusionProof.Checkpoint))
	return err != nil || !v.Satisfied
}

// refreshWitnessed proves ca's entry again, against the log's latest checkpoint whose
// cosignatures meet the policy, and records that proof; while there is none that covers
// the entry, it looks again later, less often as the anchor ages.
func (r *CrossAnchorReconciler) refreshWitnessed(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (ctrl.Result, error) {
	e, err := r.readBack(ctx, fed, ca)
	if err != nil {
		return ctrl.Result{}, err
	}
	check := *ca
	check.Status.InclusionProof = &fv1.InclusionProof{Checkpoint: e.Bundle.Verification.InclusionProof.Checkpoint}
	if lacksWitnesses(fed, &check) {
		// Real time since the log took the entry, not the controllers' clock: this waits on
		// the witnesses, which tests do not move.
		age := witnessRetryMin
		if t := ca.Status.LogEntry.IntegratedTime; t != nil {
			age = time.Since(t.Time)
		}
		return ctrl.Result{RequeueAfter: min(max(age/10, witnessRetryMin), witnessRetryMax)}, nil
	}
	r.record(ca, e)
	return ctrl.Result{}, r.Status().Update(ctx, ca)
}

// How often an anchor whose proof lacks cosignatures looks for a cosigned checkpoint:
// at first soon (the witnesses answer within a checkpoint interval), then ever less often.
const (
	witnessRetryMin = 2 * time.Second
	witnessRetryMax = 10 * time.Minute
)

// readBack reads ca's entry back from fed's log with a proof against the log's checkpoint
// of now; the entry must hold the body ca's status records and verify under the log's key.
func (r *CrossAnchorReconciler) readBack(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (*tlog.Entry, error) {
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err != nil {
		return nil, err
	}
	key, err := log.PublicKey(ctx)
	if err != nil {
		return nil, err
	}
	if logID, err := protocol.LogID(key); err != nil || ca.Status.InclusionProof == nil || string(ca.Status.InclusionProof.LogID) != logID {
		// Logged in a log the federation has moved from: its proof stays as it is.
		return nil, reconcile.TerminalError(fmt.Errorf("CrossAnchor %s is in a log Federation %s no longer uses", ca.Name, fed.Name))
	}
	e, err := log.Entry(ctx, ca.Status.LogEntry.LogIndex)
	if err != nil {
		return nil, err
	}
	if e.Bundle.Body != ca.Status.EntryBody {
		return nil, reconcile.TerminalError(fmt.Errorf("CrossAnchor %s: the log holds another body at index %d", ca.Name, e.Index))
	}
	if _, err := log.Verify(ctx, &e.Bundle); err != nil {
		return nil, fmt.Errorf("CrossAnchor %s: the log's entry %d: %w", ca.Name, e.Index, err)
	}
	return e, nil
}
