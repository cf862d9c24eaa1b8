package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// DefaultRetrySchedule is the wait after each failed upload of a cross-anchor: 1m, 5m,
// 15m, 1h, then doubling up to maxRetryWait.
var DefaultRetrySchedule = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}

// maxRetryWait caps the wait between uploads.
const maxRetryWait = 24 * time.Hour

// retryWait returns the wait after the attempts-th failed upload (1 for the first).
func retryWait(schedule []time.Duration, attempts int32) time.Duration {
	if attempts < 1 {
		return 0
	}
	if int(attempts) <= len(schedule) {
		return schedule[attempts-1]
	}
	wait := schedule[len(schedule)-1]
	for range int(attempts) - len(schedule) {
		if wait *= 2; wait >= maxRetryWait {
			return maxRetryWait
		}
	}
	return wait
}

// CrossAnchorReconciler finishes the log leg of a cross-anchor: it uploads the record to
// the Federation's log and records the entry and its proof in status, retrying on the
// schedule while the log is unavailable, and tells each participant with an Event.
type CrossAnchorReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Logs     *Logs
	// RetrySchedule is the wait after each failed upload; DefaultRetrySchedule when nil.
	RetrySchedule []time.Duration
	clock
}

// Reconcile uploads one CrossAnchor's record, unless it is Anchored already or its next
// retry is not due.
func (r *CrossAnchorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ca fv1.CrossAnchor
	if err := r.Get(ctx, req.NamespacedName, &ca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if released, err := r.protect(ctx, &ca); released || err != nil {
		return ctrl.Result{}, err
	}
	if c := meta.FindStatusCondition(ca.Status.Conditions, string(fv1.ConditionAnchored)); ca.Status.Phase == fv1.PhaseAnchored ||
		c != nil && (c.Reason == fv1.ReasonLogRefused || c.Reason == fv1.ReasonSignatureInvalid) {
		return ctrl.Result{}, nil // done, or refused for good
	}
	now := r.now()
	if next := ca.Status.NextRetryTime; next != nil && now.Before(next.Time) {
		return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
	}
	before := ca.Status.DeepCopy()
	fed, key, err := r.federation(ctx, &ca)
	if errors.Is(err, errNotOurs) {
		r.setCondition(&ca, metav1.ConditionFalse, fv1.ReasonSignatureInvalid, err.Error())
		return ctrl.Result{}, r.Status().Update(ctx, &ca)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	entry, err := r.upload(ctx, fed, key, &ca)
	var retry time.Duration
	var ev *event
	switch {
	case errors.Is(err, tlog.ErrRefused):
		r.setCondition(&ca, metav1.ConditionFalse, fv1.ReasonLogRefused, err.Error())
		ev = &event{corev1.EventTypeWarning, fv1.ReasonLogRefused, "Log", err.Error()}
	case err != nil: // unavailable, or anything else the next attempt may not meet
		ca.Status.Phase = fv1.PhasePendingTLog
		ca.Status.Attempts++
		retry = retryWait(cmpSchedule(r.RetrySchedule), ca.Status.Attempts)
		next := metav1.NewTime(now.Add(retry))
		ca.Status.NextRetryTime = &next
		msg := fmt.Sprintf("attempt %d failed, next at %s: %v", ca.Status.Attempts, next.UTC().Format(time.RFC3339), err)
		r.setCondition(&ca, metav1.ConditionFalse, fv1.ReasonPendingTLog, msg)
		ev = &event{corev1.EventTypeWarning, fv1.ReasonLogUnreachable, "Log", msg}
	default:
		failpoint(FailAfterLogUpload)
		r.record(&ca, entry)
	}
	ca.Status.ObservedGeneration = ca.Generation
	if !equality.Semantic.DeepEqual(before, &ca.Status) {
		if err := r.Status().Update(ctx, &ca); err != nil {
			return ctrl.Result{}, err
		}
		if ev != nil {
			r.Recorder.Eventf(&ca, nil, ev.kind, ev.reason, ev.action, "%s", ev.note)
			logf.FromContext(ctx).Info(ev.note, "anchor", ca.Name, "reason", ev.reason)
		}
		if entry != nil {
			r.notifyParticipants(ctx, &ca)
		}
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// upload logs ca's record with the federation key that signed it.
func (r *CrossAnchorReconciler) upload(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, ca *fv1.CrossAnchor) (*tlog.Entry, error) {
	body, err := crossAnchorRecord(ca, key)
	if err != nil {
		return nil, err
	}
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err != nil {
		return nil, &tlog.UnavailableError{Op: "open log", Err: err}
	}
	start := time.Now()
	e, err := log.Upload(ctx, body)
	observeUpload(start, err)
	return e, err
}

// crossAnchorRecord is the hashedrekord body that logs ca, signed by key.
func crossAnchorRecord(ca *fv1.CrossAnchor, key ed25519.PrivateKey) ([]byte, error) {
	content, err := protocol.CrossAnchorLogContent(string(ca.Spec.CrossAnchorHash))
	if err != nil {
		return nil, err
	}
	return protocol.NewHashedRekord(content, key)
}

// record writes a logged entry and its proof into ca's status.
func (r *CrossAnchorReconciler) record(ca *fv1.CrossAnchor, e *tlog.Entry) {
	p := e.Bundle.Verification.InclusionProof
	ca.Status.Phase = fv1.PhaseAnchored
	ca.Status.LogEntry = logEntryOf(e)
	ca.Status.InclusionProof = &fv1.InclusionProof{LogIndex: p.LogIndex, LogID: fv1.Hash(e.Bundle.LogID),
		TreeSize: p.TreeSize, RootHash: fv1.Hash(p.RootHash), Checkpoint: p.Checkpoint}
	for _, h := range p.Hashes {
		ca.Status.InclusionProof.Hashes = append(ca.Status.InclusionProof.Hashes, fv1.Hash(h))
	}
	ca.Status.SignedEntryTimestamp = e.Bundle.Verification.SignedEntryTimestamp
	ca.Status.EntryBody = e.Bundle.Body
	ca.Status.NextRetryTime = nil
	r.setCondition(ca, metav1.ConditionTrue, fv1.ReasonAnchored, fmt.Sprintf("recorded at log index %d", e.Index))
}

// errNotOurs means a CrossAnchor was not signed by its Federation's key, or has no
// Federation: it cannot be logged.
var errNotOurs = errors.New("not the federation's cross-anchor")

// federation returns the Federation ca belongs to (its label's, or else the only one in
// the namespace), and the key that signed ca.
func (r *CrossAnchorReconciler) federation(ctx context.Context, ca *fv1.CrossAnchor) (*fv1.Federation, ed25519.PrivateKey, error) {
	var fed fv1.Federation
	if name := ca.Labels[federationLabel]; name != "" {
		if err := r.Get(ctx, client.ObjectKey{Namespace: ca.Namespace, Name: name}, &fed); err != nil {
			return nil, nil, err
		}
	} else {
		var feds fv1.FederationList
		if err := r.List(ctx, &feds, client.InNamespace(ca.Namespace)); err != nil {
			return nil, nil, err
		}
		if len(feds.Items) != 1 {
			return nil, nil, fmt.Errorf("%w: no %s label, and %d Federations in the namespace", errNotOurs, federationLabel, len(feds.Items))
		}
		fed = feds.Items[0]
	}
	key, _, err := federationKey(ctx, r.Client, &fed)
	if err != nil {
		return nil, nil, err
	}
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, nil, err
	}
	if string(pemText) != string(ca.Spec.FederationPublicKeyPEM) {
		return nil, nil, fmt.Errorf("%w: signed by another key than Federation %s's", errNotOurs, fed.Name)
	}
	return &fed, key, nil
}

// notifyParticipants tells each participating operator, with an Event on its
// FederationOperator, that the anchor is in the log.
func (r *CrossAnchorReconciler) notifyParticipants(ctx context.Context, ca *fv1.CrossAnchor) {
	for _, p := range ca.Spec.Participants {
		var ops fv1.FederationOperatorList
		if err := r.List(ctx, &ops, client.InNamespace(ca.Namespace), client.MatchingFields{operatorIDIndex: string(p.OperatorID)}); err != nil {
			logf.FromContext(ctx).Error(err, "list participant", "operatorID", p.OperatorID)
			continue
		}
		for i := range ops.Items {
			r.Recorder.Eventf(&ops.Items[i], ca, corev1.EventTypeNormal, fv1.ReasonAnchored, "Anchor",
				"%s is recorded in the transparency log at index %d", ca.Name, ca.Status.LogEntry.LogIndex)
		}
	}
}

func (r *CrossAnchorReconciler) setCondition(ca *fv1.CrossAnchor, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&ca.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionAnchored), Status: status,
		Reason: reason, Message: msg, ObservedGeneration: ca.Generation})
}

func cmpSchedule(s []time.Duration) []time.Duration {
	if len(s) == 0 {
		return DefaultRetrySchedule
	}
	return s
}

// SetupWithManager watches CrossAnchors.
func (r *CrossAnchorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&fv1.CrossAnchor{}).
		Watches(&fv1.Federation{}, handler.EnqueueRequestsFromMapFunc(r.deletedAnchorsOf), builder.WithPredicates(federationGoing)).
		Named("crossanchor").
		Complete(r)
}
