package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
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
// schedule while the log is unavailable, and tells each participant with an Event. An
// anchor the federation did not make (federation.Trust) is Rejected and never uploaded.
type CrossAnchorReconciler struct {
	client.Client
	// APIReader reads the Federation past the cache before an anchor is rejected: its
	// informer and the CrossAnchors' are not ordered, so the cache may not hold the key
	// history that a new anchor's key was just recorded in.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Logs      *Logs
	// RetrySchedule is the wait after each failed upload; DefaultRetrySchedule when nil.
	RetrySchedule []time.Duration
	// Trust verifies CrossAnchors before they are uploaded.
	Trust *federation.Trust
	// Hooks are the fault tests' (nil funcs in production).
	Hooks Hooks
	clock
}

// Reconcile uploads one CrossAnchor's record, unless it is not the federation's, is in
// the log already, or its next retry is not due.
func (r *CrossAnchorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ca fv1.CrossAnchor
	if err := r.Get(ctx, req.NamespacedName, &ca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	fed, err := r.check(ctx, &ca)
	if err != nil && !errors.Is(err, federation.ErrUntrusted) && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err // not known whether ca is trusted: keep it as it is
	}
	if released, perr := r.protect(ctx, &ca, fed, err == nil); released || perr != nil {
		return ctrl.Result{}, perr
	}
	switch {
	case errors.Is(err, federation.ErrUntrusted):
		return ctrl.Result{}, r.reject(ctx, &ca, err)
	case err != nil:
		return ctrl.Result{}, err
	case lacksTimestamp(&ca):
		return r.refreshEntry(ctx, fed, &ca)
	case lacksWitnesses(fed, &ca):
		return r.refreshWitnessed(ctx, fed, &ca)
	case finished(&ca):
		return ctrl.Result{}, nil
	}
	if next := ca.Status.NextRetryTime; next != nil && r.now().Before(next.Time) {
		return ctrl.Result{RequeueAfter: next.Sub(r.now())}, nil
	}
	return r.logLeg(ctx, fed, &ca)
}

// check returns ca's Federation, and an error wrapping federation.ErrUntrusted when the federation
// did not make ca.
func (r *CrossAnchorReconciler) check(ctx context.Context, ca *fv1.CrossAnchor) (*fv1.Federation, error) {
	fed, err := anchorFederation(ctx, r.Client, ca)
	if err != nil {
		return nil, err
	}
	if err := r.Trust.Verify(fed, ca); !errors.Is(err, federation.ErrUntrusted) {
		return fed, err
	}
	if fed, err = anchorFederation(ctx, r.APIReader, ca); err != nil {
		return nil, err
	}
	return fed, r.Trust.Verify(fed, ca)
}

// reject records, once, that ca is not the federation's: phase Rejected, and a Warning
// Event after the status write.
func (r *CrossAnchorReconciler) reject(ctx context.Context, ca *fv1.CrossAnchor, why error) error {
	if ca.Status.Phase == fv1.PhaseAnchorRejected {
		return nil
	}
	ca.Status.Phase = fv1.PhaseAnchorRejected
	ca.Status.ObservedGeneration = ca.Generation
	r.setConditions(ca, metav1.ConditionFalse, fv1.ReasonUntrusted, why.Error())
	if err := r.Status().Update(ctx, ca); err != nil {
		return err
	}
	r.Recorder.Eventf(ca, nil, corev1.EventTypeWarning, fv1.ReasonUntrusted, "Verify", "%s", why.Error())
	logf.FromContext(ctx).Info("Rejected a CrossAnchor the federation did not make", "anchor", ca.Name, "reason", why.Error())
	return nil
}

// logLeg uploads ca's record and writes the outcome into its status: the entry and its
// proof, or the next retry.
func (r *CrossAnchorReconciler) logLeg(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (ctrl.Result, error) {
	before := ca.Status.DeepCopy()
	entry, err := r.upload(ctx, fed, ca)
	var retry time.Duration
	var ev *event
	switch {
	case errors.Is(err, tlog.ErrRefused):
		r.setConditions(ca, metav1.ConditionFalse, fv1.ReasonLogRefused, err.Error())
		ev = &event{corev1.EventTypeWarning, fv1.ReasonLogRefused, "Log", err.Error()}
	case err != nil: // unavailable, or anything else the next attempt may not meet
		ca.Status.Phase = fv1.PhasePendingTLog
		ca.Status.Attempts++
		retry = retryWait(cmpSchedule(r.RetrySchedule), ca.Status.Attempts)
		next := metav1.NewTime(r.now().Add(retry))
		ca.Status.NextRetryTime = &next
		msg := fmt.Sprintf("attempt %d failed, next at %s: %v", ca.Status.Attempts, next.UTC().Format(time.RFC3339), err)
		r.setConditions(ca, metav1.ConditionFalse, fv1.ReasonPendingTLog, msg)
		ev = &event{corev1.EventTypeWarning, fv1.ReasonLogUnreachable, "Log", msg}
	default:
		if r.Hooks.LogUploaded != nil {
			r.Hooks.LogUploaded(ca)
		}
		r.record(ca, entry)
	}
	ca.Status.ObservedGeneration = ca.Generation
	if equality.Semantic.DeepEqual(before, &ca.Status) {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if err := r.Status().Update(ctx, ca); err != nil {
		return ctrl.Result{}, err
	}
	if ev != nil {
		r.Recorder.Eventf(ca, nil, ev.kind, ev.reason, ev.action, "%s", ev.note)
		logf.FromContext(ctx).Info(ev.note, "anchor", ca.Name, "reason", ev.reason)
	}
	if entry != nil {
		r.notifyParticipants(ctx, ca)
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// upload logs ca's record with the federation key that signed it.
func (r *CrossAnchorReconciler) upload(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (*tlog.Entry, error) {
	key, err := r.signingKey(ctx, fed, ca)
	if err != nil {
		return nil, err
	}
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
	if ts := e.Bundle.Verification.RFC3161Timestamps; len(ts) > 0 { // an entry read back has none: keep the upload's
		ca.Status.RFC3161Timestamps = ts
	}
	ca.Status.EntryBody = e.Bundle.Body
	ca.Status.NextRetryTime = nil
	r.setConditions(ca, metav1.ConditionTrue, fv1.ReasonAnchored, fmt.Sprintf("recorded at log index %d", e.Index))
}

// signingKey returns fed's key that signed ca, to log ca's record with.
func (r *CrossAnchorReconciler) signingKey(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (ed25519.PrivateKey, error) {
	key, _, err := federationKey(ctx, r.Client, fed)
	if err != nil {
		return nil, err
	}
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	if string(pemText) != string(ca.Spec.FederationPublicKeyPEM) {
		// A key rotation waits until every anchor of the old key is in the log, so the
		// current key is the one that signed every anchor still to be logged.
		return nil, fmt.Errorf("CrossAnchor %s was signed by an earlier key of Federation %s than its current one", ca.Name, fed.Name)
	}
	return key, nil
}

// anchorFederation returns the Federation ca's label names, or else the only one in its
// namespace.
func anchorFederation(ctx context.Context, c client.Reader, ca *fv1.CrossAnchor) (*fv1.Federation, error) {
	name := ca.Labels[federation.FederationLabel]
	if name == "" {
		return federation.NamespaceFederation(ctx, c, ca.Namespace)
	}
	var fed fv1.Federation
	if err := c.Get(ctx, client.ObjectKey{Namespace: ca.Namespace, Name: name}, &fed); err != nil {
		return nil, err
	}
	return &fed, nil
}

// finished reports whether nothing is left to do for ca: it is in the log, or refused by
// the log or by federation.Trust for good.
func finished(ca *fv1.CrossAnchor) bool {
	switch ca.Status.Phase {
	case fv1.PhaseAnchored, fv1.PhaseAnchorRejected:
		return true
	}
	c := meta.FindStatusCondition(ca.Status.Conditions, string(fv1.ConditionAnchored))
	return c != nil && c.Reason == fv1.ReasonLogRefused
}

// notifyParticipants tells each participating operator of a seed-form anchor, with an
// Event on its FederationOperator, that the anchor is in the log. A Merkle-form anchor
// binds any number of operators, whose receipts tell them: an Event each would flood the
// API server, so the anchor's own Event is all.
func (r *CrossAnchorReconciler) notifyParticipants(ctx context.Context, ca *fv1.CrossAnchor) {
	for _, p := range ca.Spec.Participants {
		var ops fv1.FederationOperatorList
		if err := r.List(ctx, &ops, client.InNamespace(ca.Namespace), client.MatchingFields{federation.OperatorIDIndex: string(p.OperatorID)}); err != nil {
			logf.FromContext(ctx).Error(err, "list participant", "operatorID", p.OperatorID)
			continue
		}
		for i := range ops.Items {
			r.Recorder.Eventf(&ops.Items[i], ca, corev1.EventTypeNormal, fv1.ReasonAnchored, "Anchor",
				"%s is recorded in the transparency log at index %d", ca.Name, ca.Status.LogEntry.LogIndex)
		}
	}
}

// setConditions sets Anchored and Ready together: an anchor does its job once it is in
// the log.
func (r *CrossAnchorReconciler) setConditions(ca *fv1.CrossAnchor, status metav1.ConditionStatus, reason, msg string) {
	for _, t := range []fv1.ConditionType{fv1.ConditionAnchored, fv1.ConditionReady} {
		meta.SetStatusCondition(&ca.Status.Conditions, metav1.Condition{Type: string(t), Status: status,
			Reason: reason, Message: msg, ObservedGeneration: ca.Generation})
	}
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
		Named("crossanchor").
		Complete(r)
}
