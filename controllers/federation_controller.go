package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// logRetry is how soon a Federation whose log did not answer is reconciled again.
const logRetry = time.Minute

// witnessRecheck is how often at least a Federation with witnesses is reconciled, for its
// Witnessed condition, should a change notice have been dropped.
const witnessRecheck = time.Minute

// keyRetry is how soon a due anchor run that waits for its key to be recorded in the
// key history, or for a run stopped half-way to be adopted, is tried again.
const keyRetry = time.Second

// FederationReconciler keeps a Federation's keys and log ready and anchors on its
// schedule: it generates the signing key and admin token into Secrets when absent, logs
// the genesis record once (federation_keys.go), and runs a cross-anchor (anchor.go) at
// lastAnchor + anchorInterval, or earlier once pendingThreshold submissions wait, by
// requeueing itself (schedule.go; no CronJob), and at once for an anchor request
// (anchor_request.go). It watches every change of a Federation, its annotations too.
type FederationReconciler struct {
	client.Client
	// APIReader reads past the cache, so that an anchor run never acts on a stale view
	// of the anchors.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Logs      *Logs
	// Trust verifies CrossAnchors before they are adopted, counted or re-signed.
	Trust *federation.Trust
	// Ledger is what the trusted anchors bound, by operator: what a run binds next.
	Ledger *federation.Ledger
	// MaxParticipants is how many operators one seed-form anchor binds at most;
	// federation.MaxParticipantsPerAnchor when 0.
	MaxParticipants int
	// Merkle keeps the leaves of Merkle-form anchors; nil (no history store) makes every
	// anchor of the seed form.
	Merkle *federation.MerkleAnchors
	// Hooks are the fault tests' (nil funcs in production).
	Hooks Hooks
	clock
	// witnessEvents carries the logs' witnessing changes (Setup wires Logs to it).
	witnessEvents witnessEvents
}

// federationEvent is an Event about a Federation, recorded once the status that explains
// it is written.
type federationEvent struct {
	event
	related client.Object
}

// Reconcile brings one Federation's status up to date and anchors when due.
func (r *FederationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var fed fv1.Federation
	if err := r.Get(ctx, req.NamespacedName, &fed); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := fed.DeepCopy()
	var evs []federationEvent
	result, err := r.sync(ctx, &fed, &evs)
	fed.Status.ObservedGeneration = fed.Generation
	if !equality.Semantic.DeepEqual(&base.Status, &fed.Status) {
		// A merge patch of what this reconcile changed (the API writes the status's
		// apiSuspensions and apiApprovals, which this controller only reads), at the
		// resourceVersion it read: a reconcile of a stale copy from the cache must not
		// write, or it would undo what the one before it did (a key rotation twice).
		if werr := r.Status().Patch(ctx, &fed, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); werr != nil {
			return result, errors.Join(err, werr)
		}
	}
	for _, e := range evs {
		r.Recorder.Eventf(&fed, e.related, e.kind, e.reason, e.action, "%s", e.note)
	}
	return result, err
}

// sync loads the key, logs the genesis record, counts, and anchors when due. Events to
// record after the status write are appended to evs.
func (r *FederationReconciler) sync(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) (ctrl.Result, error) {
	ours, err := federation.NamespaceFederation(ctx, r.Client, fed.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ours.UID != fed.UID {
		// Not the namespace's: it makes no key, record or anchor, so that it can neither
		// act for the namespace's operators nor get in the way of the Federation that does.
		r.setCondition(fed, fv1.ConditionReady, metav1.ConditionFalse, fv1.ReasonNotServing, fmt.Sprintf(
			"Federation %s is this namespace's (the oldest); a namespace has one, and this one does nothing", ours.Name))
		return ctrl.Result{}, nil
	}
	recorded := slices.Clone(fed.Status.KeyHistory)
	key, err := r.loadKey(ctx, fed, evs)
	if err != nil || key == nil {
		return ctrl.Result{}, err
	}
	if err := ensureAdminSecret(ctx, r.Client, fed); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.adoptAnchors(ctx, r.Client, fed); err != nil {
		return ctrl.Result{}, err
	}
	logReady := r.logGenesis(ctx, fed, key, evs)
	r.witnessCondition(ctx, fed, evs)
	if err := r.count(ctx, fed); err != nil {
		return ctrl.Result{}, err
	}
	now := r.now()
	due := r.dueAt(fed)
	threshold := fed.Spec.PendingThreshold != nil && fed.Status.PendingCount >= *fed.Spec.PendingThreshold
	scheduled := !now.Before(due) || threshold
	request := r.anchorRequest(ctx, fed, evs)
	if (scheduled || request != "") && !keyRecorded(recorded, key) {
		// An anchor signed by a key that the stored key history lacks would be rejected
		// by every reader: first this reconcile's status write records the key.
		return ctrl.Result{RequeueAfter: keyRetry}, nil
	}
	if scheduled || request != "" {
		r.checkLastAnchor(ctx, fed, evs)
		anchors, covered, err := r.run(ctx, fed, key, request)
		switch {
		case errors.Is(err, errRequestAdopted):
			logf.FromContext(ctx).V(1).Info("Anchor request adopted", "reason", err.Error())
			return ctrl.Result{RequeueAfter: keyRetry}, nil
		case errors.Is(err, errNotEnoughParticipants):
			if fed.Status.PendingCount > 0 { // with nothing pending, the condition still tells of the last anchor
				r.setCondition(fed, fv1.ConditionAnchored, metav1.ConditionFalse, fv1.ReasonNotEnoughParticipants, err.Error())
			}
		case err != nil:
			return ctrl.Result{}, err
		default:
			fed.Status.PendingCount = max(fed.Status.PendingCount-int32(covered), 0)
			last := anchors[len(anchors)-1]
			r.setCondition(fed, fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "last anchor "+last.Name)
			for _, ca := range anchors {
				anchorsTotal.WithLabelValues(fed.Namespace, fed.Name).Inc()
				*evs = append(*evs, federationEvent{event{corev1.EventTypeNormal, fv1.ReasonAnchored, "Anchor",
					fmt.Sprintf("anchored %d operators in %s", federation.ParticipantCount(ca), ca.Name)}, ca})
				logf.FromContext(ctx).Info("Anchored", "anchor", ca.Name, "participants", federation.ParticipantCount(ca), "hash", ca.Spec.CrossAnchorHash,
					"part", ca.Annotations[fv1.AnchorRunPartAnnotation], "request", request)
			}
		}
		if request != "" {
			// In the same status write as the anchors: a request is handled once.
			recordRequest(fed, request, anchors, covered, err, now)
		}
		if scheduled {
			// The next run is an interval away, whether or not this one anchored.
			due = now.Add(fed.Spec.AnchorInterval.Duration)
		} else {
			due = r.dueAt(fed) // a requested run leaves the schedule as it was
		}
	}
	if fed.Status.NextAnchorTime == nil || !fed.Status.NextAnchorTime.Equal(&metav1.Time{Time: due}) {
		next := metav1.NewTime(due)
		fed.Status.NextAnchorTime = &next
	}
	pendingGauge.WithLabelValues(fed.Namespace, fed.Name).Set(float64(fed.Status.PendingCount))
	if c := logKeyProblem(fed); c != nil {
		r.setCondition(fed, fv1.ConditionReady, metav1.ConditionFalse, c.Reason, "the embedded log stays closed: "+c.Message)
	} else {
		r.setCondition(fed, fv1.ConditionReady, metav1.ConditionTrue, fv1.ReasonKeyLoaded, "the signing key is loaded and anchoring is scheduled")
	}
	wait := due.Sub(now)
	if !logReady || rotationPending(fed) {
		wait = min(wait, logRetry)
	}
	if fed.Spec.TransparencyLog.Witnesses != nil {
		wait = min(wait, witnessRecheck)
	}
	return ctrl.Result{RequeueAfter: max(wait, time.Second)}, nil
}

// keyRecorded reports whether key's public half is in history.
func keyRecorded(history []fv1.KeyRecord, key ed25519.PrivateKey) bool {
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	return err == nil && slices.ContainsFunc(history, func(k fv1.KeyRecord) bool { return k.PublicKeyPEM == fv1.PublicKeyPEM(pemText) })
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
		// When a namespace's Federation goes, another of the namespace becomes its own.
		Watches(&fv1.Federation{}, handler.EnqueueRequestsFromMapFunc(r.federationsOf), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(crevent.CreateEvent) bool { return false }, UpdateFunc: func(crevent.UpdateEvent) bool { return false },
			DeleteFunc: func(crevent.DeleteEvent) bool { return true }, GenericFunc: func(crevent.GenericEvent) bool { return false }})).
		WatchesRawSource(source.Channel(r.witnessEvents, &handler.EnqueueRequestForObject{})).
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
