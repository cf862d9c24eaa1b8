package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// logRetry is how soon a Federation whose log did not answer is reconciled again.
const logRetry = time.Minute

// FederationReconciler keeps a Federation's keys and log ready and anchors on its
// schedule: it generates the signing key and admin token into Secrets when absent, logs
// the genesis record once, and runs a cross-anchor at lastAnchor + anchorInterval, or
// earlier once pendingThreshold submissions wait, by requeueing itself (no CronJob).
type FederationReconciler struct {
	client.Client
	// APIReader reads past the cache, so that an anchor run never acts on a stale view.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Logs      *Logs
	clock
}

// Reconcile brings one Federation's status up to date and anchors when due.
func (r *FederationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var fed fv1.Federation
	if err := r.Get(ctx, req.NamespacedName, &fed); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := fed.Status.DeepCopy()
	result, err := r.sync(ctx, &fed)
	fed.Status.ObservedGeneration = fed.Generation
	if !equality.Semantic.DeepEqual(before, &fed.Status) {
		err = errors.Join(err, r.Status().Update(ctx, &fed))
	}
	return result, err
}

func (r *FederationReconciler) sync(ctx context.Context, fed *fv1.Federation) (ctrl.Result, error) {
	key, err := r.loadKey(ctx, fed)
	if err != nil || key == nil {
		return ctrl.Result{}, err
	}
	if err := ensureAdminSecret(ctx, r.Client, fed); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.adoptAnchors(ctx, r.Client, fed); err != nil {
		return ctrl.Result{}, err
	}
	logReady := r.logGenesis(ctx, fed, key)

	pending, err := pendingSubmissions(ctx, r.Client, fed)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.countOperators(ctx, fed); err != nil {
		return ctrl.Result{}, err
	}
	fed.Status.PendingCount = int32(len(pending))
	now := r.now()
	due := r.dueAt(fed)
	threshold := fed.Spec.PendingThreshold != nil && len(pending) >= int(*fed.Spec.PendingThreshold)
	if !now.Before(due) || threshold {
		ca, covered, err := r.run(ctx, fed, key)
		switch {
		case errors.Is(err, errStaleCache):
			logf.FromContext(ctx).V(1).Info("anchor run waits", "reason", err.Error())
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case errors.Is(err, errNotEnoughParticipants):
			if len(pending) > 0 { // with nothing pending, the condition still tells of the last anchor
				r.setCondition(fed, fv1.ConditionAnchored, metav1.ConditionFalse, fv1.ReasonNotEnoughParticipants, err.Error())
			}
		case err != nil:
			return ctrl.Result{}, err
		default:
			fed.Status.PendingCount = max(fed.Status.PendingCount-int32(len(covered)), 0)
			r.setCondition(fed, fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "last anchor "+ca.Name)
			anchorsTotal.WithLabelValues(fed.Namespace, fed.Name).Inc()
			r.Recorder.Eventf(fed, ca, corev1.EventTypeNormal, fv1.ReasonAnchored, "Anchor", "anchored %d operators in %s", len(ca.Spec.Participants), ca.Name)
			logf.FromContext(ctx).Info("anchored", "anchor", ca.Name, "participants", len(ca.Spec.Participants), "hash", ca.Spec.CrossAnchorHash)
		}
		// The next run is an interval away, whether or not this one anchored.
		next := metav1.NewTime(now.Add(fed.Spec.AnchorInterval.Duration))
		fed.Status.NextAnchorTime = &next
		due = next.Time
	} else if fed.Status.NextAnchorTime == nil || !fed.Status.NextAnchorTime.Equal(&metav1.Time{Time: due}) {
		next := metav1.NewTime(due)
		fed.Status.NextAnchorTime = &next
	}
	pendingGauge.WithLabelValues(fed.Namespace, fed.Name).Set(float64(fed.Status.PendingCount))
	r.setCondition(fed, fv1.ConditionReady, metav1.ConditionTrue, fv1.ReasonKeyLoaded, "the signing key is loaded and anchoring is scheduled")
	wait := due.Sub(now)
	if !logReady || rotationPending(fed) {
		wait = min(wait, logRetry)
	}
	return ctrl.Result{RequeueAfter: max(wait, time.Second)}, nil
}

// loadKey reads (or generates) the signing key, rotates it when spec names another
// Secret, and publishes its public half. A Secret holding no usable key leaves the
// Federation not ready, and a nil key.
func (r *FederationReconciler) loadKey(ctx context.Context, fed *fv1.Federation) (ed25519.PrivateKey, error) {
	key, created, err := federationKey(ctx, r.Client, fed)
	if err != nil {
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionFalse, fv1.ReasonKeyInvalid, err.Error())
		r.setCondition(fed, fv1.ConditionReady, metav1.ConditionFalse, fv1.ReasonKeyInvalid, "no usable signing key")
		return nil, nil // waits for the Secret to be fixed
	}
	switch {
	case created:
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyGenerated, "the signing key was generated into its Secret")
	case !meta.IsStatusConditionTrue(fed.Status.Conditions, string(fv1.ConditionKeyReady)):
		r.setCondition(fed, fv1.ConditionKeyReady, metav1.ConditionTrue, fv1.ReasonKeyLoaded, "the signing key was read from its Secret")
	}
	if fed.Status.SigningKeySecret == "" {
		fed.Status.SigningKeySecret = secretName(fed, fed.Spec.SigningKeySecretRef, "signing-key")
	}
	if len(fed.Status.KeyHistory) == 0 {
		pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
		if err != nil {
			return nil, err
		}
		fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(pemText),
			Fingerprint: fv1.Hash(protocol.Fingerprint(key.Public().(ed25519.PublicKey))), ValidFrom: metav1.NewTime(r.now())}}
	}
	if rotationPending(fed) {
		if key, err = r.rotateKey(ctx, fed, key); err != nil {
			return nil, err
		}
	}
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	fed.Status.PublicKeyPEM = fv1.PublicKeyPEM(pemText)
	fed.Status.PublicKeyFingerprint = fv1.Hash(protocol.Fingerprint(pub))
	return key, nil
}

// logGenesis opens fed's log and records the genesis record once. It reports whether
// the log answered.
func (r *FederationReconciler) logGenesis(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey) bool {
	log, err := r.Logs.For(ctx, r.Client, fed)
	if err == nil && fed.Status.GenesisLogEntry == nil {
		var body []byte
		body, err = protocol.NewRecordEntry(protocol.GenesisRecord{Type: protocol.RecordGenesis,
			Federation: fed.Namespace + "/" + fed.Name, PublicKeyPEM: string(fed.Status.PublicKeyPEM)}, key)
		if err == nil {
			var e *tlog.Entry
			if e, err = log.Upload(ctx, body); err == nil {
				fed.Status.GenesisLogEntry = logEntryOf(e)
			}
		}
	} else if err == nil && !meta.IsStatusConditionTrue(fed.Status.Conditions, string(fv1.ConditionLogReachable)) {
		// Only to see a log come back: while it answers, every upload says so, and a
		// Federation is reconciled on every Submission change.
		err = log.Reachable(ctx)
	}
	if err != nil {
		r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionFalse, fv1.ReasonLogUnreachable, err.Error())
		return false
	}
	r.setCondition(fed, fv1.ConditionLogReachable, metav1.ConditionTrue, fv1.ReasonLogReachable, "the transparency log answers")
	return true
}

// logEntryOf is the status form of a log entry.
func logEntryOf(e *tlog.Entry) *fv1.LogEntry {
	at := metav1.NewTime(e.IntegratedTime)
	return &fv1.LogEntry{LogIndex: e.Index, UUID: e.UUID, URL: e.URL, IntegratedTime: &at}
}

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

// countOperators sets the numbers of Active and of all operators.
func (r *FederationReconciler) countOperators(ctx context.Context, fed *fv1.Federation) error {
	var ops fv1.FederationOperatorList
	if err := r.List(ctx, &ops, client.InNamespace(fed.Namespace)); err != nil {
		return err
	}
	fed.Status.OperatorCount, fed.Status.TotalOperators = 0, int32(len(ops.Items))
	for _, o := range ops.Items {
		if o.Status.Phase == fv1.PhaseActive {
			fed.Status.OperatorCount++
		}
	}
	return nil
}

func (r *FederationReconciler) setCondition(fed *fv1.Federation, t fv1.ConditionType, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&fed.Status.Conditions, metav1.Condition{Type: string(t), Status: status,
		Reason: reason, Message: msg, ObservedGeneration: fed.Generation})
}

// SetupWithManager watches Federations, the Submissions and operators whose changes move
// their counts and the pending threshold, and the CrossAnchors a key rotation waits for.
func (r *FederationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&fv1.Federation{}).
		Watches(&fv1.Submission{}, handler.EnqueueRequestsFromMapFunc(r.federationsOf)).
		Watches(&fv1.FederationOperator{}, handler.EnqueueRequestsFromMapFunc(r.federationsOf)).
		Watches(&fv1.CrossAnchor{}, handler.EnqueueRequestsFromMapFunc(r.federationsOf)). // a key rotation waits for them
		Named("federation").
		Complete(r)
}

// federationsOf maps an object to the Federations of its namespace.
func (r *FederationReconciler) federationsOf(ctx context.Context, o client.Object) []reconcile.Request {
	var feds fv1.FederationList
	if err := r.List(ctx, &feds, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(feds.Items))
	for _, f := range feds.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&f)})
	}
	return reqs
}
