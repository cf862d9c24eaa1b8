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
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// FederationOperatorReconciler registers operators applied with kubectl (or created by the
// API): it verifies the proof of possession, assigns operator_id from the key, rejects a
// key another operator holds or ever held (operator_identity.go), and applies a signed key
// rotation, rename (operator_organization.go) or withdrawal. It records each operator's
// head (operator_head.go).
type FederationOperatorReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Logs records registrations, withdrawals and key rotations.
	Logs *Logs
	// APIReader reads the used-challenge records a challenge proof is checked against
	// (ConfigMaps, not cached); the Client when nil.
	APIReader client.Reader
	clock
}

// records is where the used-challenge records are read.
func (r *FederationOperatorReconciler) records() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// Reconcile moves one FederationOperator's status to Pending, Active, Rejected, Suspended
// or Withdrawn, and records its head. It is the only writer of a FederationOperator's status.
func (r *FederationOperatorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var fo fv1.FederationOperator
	if err := r.Get(ctx, req.NamespacedName, &fo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if fo.Status.Phase == fv1.PhaseWithdrawn && fo.Status.WithdrawalLogEntry != nil {
		return ctrl.Result{}, nil // final: past anchors keep it, nothing undoes it
	}
	before := fo.Status.DeepCopy()
	var events []*event
	step := func(f func(context.Context, *fv1.FederationOperator) (*event, error)) error {
		ev, err := f(ctx, &fo)
		if ev != nil {
			events = append(events, ev)
		}
		return err
	}
	decided, ev, wait, err := r.fromLog(ctx, &fo) // operator_restore.go: the log's verdicts first
	if ev != nil {
		events = append(events, ev)
	}
	switch {
	case err != nil || decided:
	case fo.Status.Phase == fv1.PhaseActive || fo.Status.Phase == fv1.PhaseSuspended:
		err = step(r.update)
	case fo.Status.Phase == fv1.PhaseWithdrawn:
	default:
		err = step(r.register)
	}
	if err == nil && (fo.Status.Phase == fv1.PhaseActive || fo.Status.Phase == fv1.PhaseSuspended) {
		err = step(r.followSuspension)
		if err == nil {
			err = step(r.followOrganization) // operator_organization.go
		}
	}
	if err == nil {
		err = r.recordHead(ctx, &fo)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	retry := r.logRecords(ctx, &fo)
	if wait > 0 && (retry == 0 || wait < retry) {
		retry = wait
	}
	fo.Status.ObservedGeneration = fo.Generation
	if !equality.Semantic.DeepEqual(before, &fo.Status) {
		if err := r.Status().Update(ctx, &fo); err != nil {
			return ctrl.Result{}, err
		}
		for _, event := range events { // only once the status that explains it is written
			r.Recorder.Eventf(&fo, nil, event.kind, event.reason, event.action, "%s", event.note)
			logf.FromContext(ctx).Info(event.note, "operatorID", fo.Status.OperatorID, "phase", fo.Status.Phase, "reason", event.reason)
		}
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// event is what a reconcile tells users through a Kubernetes Event.
type event struct {
	kind, reason, action, note string
}

// register decides whether fo, not yet registered, becomes Active, Pending (awaiting its
// Federation's approval) or Rejected, from its spec, the other operators and the
// Federation.
func (r *FederationOperatorReconciler) register(ctx context.Context, fo *fv1.FederationOperator) (*event, error) {
	pub, err := protocol.ParsePublicKeyPEM([]byte(fo.Spec.PublicKeyPEM))
	if err != nil {
		return r.reject(fo, fv1.ReasonKeyInvalid, fmt.Sprintf("publicKeyPEM: %v", err)), nil
	}
	fo.Status.OperatorID = fv1.OperatorID(protocol.OperatorID(pub))
	if err := federation.ProvesPossession(fo, pub); err != nil {
		return r.reject(fo, fv1.ReasonSignatureInvalid, fmt.Sprintf("%s: %v", federation.ProofField(fo), err)), nil
	}
	if fo.Status.Phase != fv1.PhasePending { // a Pending operator passed it when it was decided
		switch err := federation.CheckChallengeUse(ctx, r.Client, r.records(), r.namespaceFederation(ctx, fo.Namespace), fo); {
		case errors.Is(err, federation.ErrChallengeProof):
			return r.reject(fo, fv1.ReasonSignatureInvalid, err.Error()), nil
		case err != nil:
			return nil, err
		}
	}
	holder, err := r.keyHolder(ctx, fo, string(fo.Status.OperatorID))
	if err != nil {
		return nil, err
	}
	if holder != nil {
		return r.reject(fo, fv1.ReasonDuplicateKey, federation.DescribeHolder(holder)+
			" holds or once held this key, and an operator ID is never registered twice"), nil
	}
	r.registerOrganization(fo, pub)                 // operator_organization.go
	if ev, wait := r.awaitApproval(ctx, fo); wait { // operator_approval.go
		return ev, nil
	}
	now := metav1.NewTime(r.now())
	fo.Status.Phase = fv1.PhaseActive
	fo.Status.RegisteredAt = &now
	fo.Status.KeyHistory = []fv1.KeyRecord{{
		PublicKeyPEM: fo.Spec.PublicKeyPEM,
		Fingerprint:  fv1.Hash(protocol.Fingerprint(pub)),
		ValidFrom:    now,
	}}
	r.setConditions(fo, metav1.ConditionTrue, fv1.ReasonRegistered, "the proof of possession verifies and the key is this operator's")
	return &event{corev1.EventTypeNormal, fv1.ReasonRegistered, "Register", "registered as " + string(fo.Status.OperatorID)}, nil
}

// update applies, to an Active or Suspended operator, a key rotation (a changed publicKeyPEM) or a
// withdrawal.
func (r *FederationOperatorReconciler) update(ctx context.Context, fo *fv1.FederationOperator) (*event, error) {
	current := federation.CurrentKey(fo)
	if fo.Spec.PublicKeyPEM != current.PublicKeyPEM {
		return r.rotate(ctx, fo, current)
	}
	if fo.Spec.Withdrawal != nil {
		return r.withdraw(fo, federation.MustKey(current.PublicKeyPEM)), nil
	}
	return nil, nil
}

// rotate moves fo to the key in its spec, if spec.keyRotation is signed by both keys and
// no operator, fo included, ever held the new key.
func (r *FederationOperatorReconciler) rotate(ctx context.Context, fo *fv1.FederationOperator, current *fv1.KeyRecord) (*event, error) {
	newPub, reason, msg := federation.CheckRotation(fo, r.now())
	if reason != "" {
		return refuseRotation(fo, reason, msg), nil
	}
	newID := protocol.OperatorID(newPub)
	holder, err := r.keyHolder(ctx, fo, newID)
	if err != nil {
		return nil, err
	}
	if holder != nil {
		return refuseRotation(fo, fv1.ReasonDuplicateKey, federation.DescribeHolder(holder)+" holds or once held the new key"), nil
	}
	now := metav1.NewTime(r.now())
	current.ValidUntil = &now
	fo.Status.KeyHistory = append(fo.Status.KeyHistory, fv1.KeyRecord{PublicKeyPEM: fo.Spec.PublicKeyPEM,
		Fingerprint: fv1.Hash(protocol.Fingerprint(newPub)), ValidFrom: now})
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
		Status: metav1.ConditionTrue, Reason: fv1.ReasonKeyRotated, Message: "rotated to " + protocol.Fingerprint(newPub), ObservedGeneration: fo.Generation})
	return &event{corev1.EventTypeNormal, fv1.ReasonKeyRotated, "RotateKey", "rotated to the key with fingerprint " + protocol.Fingerprint(newPub)}, nil
}

// refuseRotation records on fo that its key rotation is refused for reason; the current
// key stays.
func refuseRotation(fo *fv1.FederationOperator, reason, why string) *event {
	msg := "key rotation refused, the current key stays: " + why
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
		Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: fo.Generation})
	return &event{corev1.EventTypeWarning, reason, "RotateKey", msg}
}

// logRecords logs what fo's status says happened and the log does not hold yet: the
// registration, each key rotation and rename, each suspension and resumption, the withdrawal. It returns how soon to try again when
// the log did not take them.
func (r *FederationOperatorReconciler) logRecords(ctx context.Context, fo *fv1.FederationOperator) time.Duration {
	if r.Logs == nil || !federation.Registered(fo) { // nothing of a Pending or Rejected operator is logged
		return 0
	}
	id := string(fo.Status.OperatorID)
	var failed error
	try := func(dst **fv1.LogEntry, record func(federation string) any) {
		if *dst != nil || failed != nil {
			return
		}
		*dst, failed = logRecord(ctx, r.Client, r.Logs, fo.Namespace, record)
	}
	first := fo.Status.KeyHistory[0]
	try(&fo.Status.RegistrationLogEntry, func(fed string) any {
		return protocol.RegistrationRecord{Type: protocol.RecordRegistration, Federation: fed, OperatorID: id, OrgName: federation.RegisteredOrgName(fo),
			PublicKeyPEM: string(first.PublicKeyPEM), ProofOfPossession: string(fo.Spec.ProofOfPossession),
			Challenge: registrationChallenge(fo)}
	})
	for i := 1; i < len(fo.Status.KeyHistory); i++ {
		k, prev := &fo.Status.KeyHistory[i], fo.Status.KeyHistory[i-1]
		try(&k.LogEntry, func(fed string) any {
			return protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: fed, OperatorID: id,
				OldPublicKeyPEM: string(prev.PublicKeyPEM), NewPublicKeyPEM: string(k.PublicKeyPEM), ValidFrom: k.ValidFrom.UTC().Format(time.RFC3339)}
		})
	}
	logRenames(fo, try) // operator_organization.go
	for i := range fo.Status.Suspensions {
		rec := &fo.Status.Suspensions[i]
		try(&rec.LogEntry, func(fed string) any { return suspensionRecord(fed, id, rec) })
	}
	if fo.Status.Phase == fv1.PhaseWithdrawn && fo.Spec.Withdrawal != nil {
		try(&fo.Status.WithdrawalLogEntry, func(fed string) any {
			return protocol.WithdrawalRecord{Type: protocol.RecordWithdrawal, Federation: fed,
				Withdrawal: protocol.Withdrawal{OperatorID: id, At: string(fo.Spec.Withdrawal.At), Signature: string(fo.Spec.Withdrawal.Signature)}}
		})
	}
	if failed != nil {
		logf.FromContext(ctx).Info("record not logged yet", "operatorID", id, "error", failed.Error())
		return logRetry
	}
	return 0
}

// withdraw applies a verified withdrawal; an invalid one leaves fo Active with a condition
// saying why.
func (r *FederationOperatorReconciler) withdraw(fo *fv1.FederationOperator, pub ed25519.PublicKey) *event {
	w := protocol.Withdrawal{OperatorID: string(fo.Status.OperatorID), At: string(fo.Spec.Withdrawal.At), Signature: string(fo.Spec.Withdrawal.Signature)}
	if err := w.VerifyAs(string(fo.Status.OperatorID), pub, r.now()); err != nil {
		msg := fmt.Sprintf("withdrawal: %v", err)
		if errors.Is(err, protocol.ErrExpired) {
			msg += " (sign a new one dated now)"
		}
		meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
			Status: metav1.ConditionFalse, Reason: fv1.ReasonWithdrawalInvalid, Message: msg, ObservedGeneration: fo.Generation})
		return &event{corev1.EventTypeWarning, fv1.ReasonWithdrawalInvalid, "Withdraw", msg}
	}
	fo.Status.Phase = fv1.PhaseWithdrawn
	r.setConditions(fo, metav1.ConditionFalse, fv1.ReasonWithdrawn, "withdrawn at "+w.At+"; past anchors keep this operator")
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
		Status: metav1.ConditionTrue, Reason: fv1.ReasonVerified, Message: "the withdrawal verifies", ObservedGeneration: fo.Generation})
	return &event{corev1.EventTypeNormal, fv1.ReasonWithdrawn, "Withdraw", "withdrawn at " + w.At}
}

// reject marks fo Rejected for reason.
func (r *FederationOperatorReconciler) reject(fo *fv1.FederationOperator, reason, msg string) *event {
	fo.Status.Phase = fv1.PhaseRejected
	r.setConditions(fo, metav1.ConditionFalse, reason, msg)
	return &event{corev1.EventTypeWarning, reason, "Register", msg}
}

// setConditions sets Ready and SignatureVerified together.
func (r *FederationOperatorReconciler) setConditions(fo *fv1.FederationOperator, status metav1.ConditionStatus, reason, msg string) {
	for _, t := range []fv1.ConditionType{fv1.ConditionReady, fv1.ConditionSignatureVerified} {
		meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(t), Status: status,
			Reason: reason, Message: msg, ObservedGeneration: fo.Generation})
	}
}

// SetupWithManager indexes operators by every key they hold or held and watches them;
// when an operator changes, the others indexed under its keys are reconciled too (a
// rejected duplicate may become the holder when the first is deleted). A Federation's
// change reconciles only the operators whose suspension or approval it changed.
func (r *FederationOperatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&fv1.FederationOperator{}).
		Watches(&fv1.FederationOperator{}, handler.EnqueueRequestsFromMapFunc(r.sameKey)).
		Watches(&fv1.Federation{}, r.federationEvents()). // operator_watch.go
		Watches(&fv1.Submission{}, handler.EnqueueRequestsFromMapFunc(r.operatorOfSubmission), builder.WithPredicates(becameAccepted)).
		Named("federationoperator").
		Complete(r)
}
