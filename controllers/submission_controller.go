package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// submissionWorkers is how many Submissions are verified at once: each waits mostly on
// two status writes.
const submissionWorkers = 8

// unknownOperatorRetry is how soon a submission whose operator is not (yet) Active is
// looked at again; the operator's own changes also requeue it.
const unknownOperatorRetry = time.Minute

// SubmissionReconciler accepts or refuses Submissions: its name (federation.SubmissionName),
// the header signature against the operator's current key, then continuity and
// entry-count growth against the operator's head (federation.HeadOf: its newest accepted
// submission), and the Federation's bound on pending submissions. Its verdict is the one
// write an accepted submission costs: the head moves with it, and the FederationOperator
// controller records the head in the operator's status afterwards. Once a trusted
// CrossAnchor covers an accepted submission, it marks the submission anchored
// (coverage.go), for readers: no anchor run waits for that. It is the only writer of a
// Submission's status.
type SubmissionReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Trust verifies CrossAnchors before they are marked from.
	Trust *federation.Trust
	// Merkle reads the checked trees of Merkle-form anchors; nil without a history store.
	Merkle *federation.MerkleAnchors
	// Hooks are the fault tests' (nil funcs in production).
	Hooks Hooks
	clock
}

// Reconcile verifies one Submission, or marks an accepted one anchored. A verdict, once
// reached, is final: the spec cannot change.
func (r *SubmissionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var sub fv1.Submission
	if err := r.Get(ctx, req.NamespacedName, &sub); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if federation.Decided(&sub) {
		if !federation.IsPending(&sub) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.markIfCovered(ctx, &sub)
	}
	before := sub.Status.DeepCopy()
	ev, retry, err := r.judge(ctx, &sub)
	if err != nil {
		return ctrl.Result{}, err
	}
	sub.Status.ObservedGeneration = sub.Generation
	if equality.Semantic.DeepEqual(before, &sub.Status) {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if err := r.Status().Update(ctx, &sub); err != nil {
		return ctrl.Result{}, err
	}
	if ev != nil {
		countVerdict(ev.reason)
		// Refusals get an Event; acceptances, the bulk, only their status and a log line:
		// an Event each cost the API server as much as the verdict itself.
		if ev.kind == corev1.EventTypeWarning {
			r.Recorder.Eventf(&sub, nil, ev.kind, ev.reason, ev.action, "%s", ev.note)
		}
		logf.FromContext(ctx).Info(ev.note, "operatorID", sub.Spec.OperatorID, "reason", ev.reason)
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// judge reaches sub's verdict, in its status: it returns the Event that tells of it, or
// how soon to look again when the operator is not registered yet.
func (r *SubmissionReconciler) judge(ctx context.Context, sub *fv1.Submission) (*event, time.Duration, error) {
	op, ambiguous, err := r.operator(ctx, sub)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case ambiguous != "":
		return refuse(sub, fv1.ConditionSignatureVerified, fv1.ReasonOperatorAmbiguous, ambiguous), 0, nil
	case op == nil:
		msg := fmt.Sprintf("no Active FederationOperator with operatorID %s in this namespace", sub.Spec.OperatorID)
		setSubmissionCondition(sub, fv1.ConditionSignatureVerified, metav1.ConditionFalse, fv1.ReasonOperatorUnknown, msg)
		setSubmissionCondition(sub, fv1.ConditionReady, metav1.ConditionFalse, fv1.ReasonOperatorUnknown, msg)
		return nil, unknownOperatorRetry, nil
	case op.Status.Phase == fv1.PhaseWithdrawn:
		return refuse(sub, fv1.ConditionSignatureVerified, fv1.ReasonWithdrawn, fmt.Sprintf("operator %s has withdrawn", op.Name)), 0, nil
	}
	ev, err := r.verify(ctx, sub, op)
	return ev, 0, err
}

// refuse records a final refusal of sub in condition t and in Ready, and returns its Event.
func refuse(sub *fv1.Submission, t fv1.ConditionType, reason, msg string) *event {
	setSubmissionCondition(sub, t, metav1.ConditionFalse, reason, msg)
	setSubmissionCondition(sub, fv1.ConditionReady, metav1.ConditionFalse, reason, msg)
	return &event{corev1.EventTypeWarning, reason, "Verify", msg}
}

// operator returns the operator sub names by status.operatorID when it is Active or
// Withdrawn, else nil. Rejected objects are never considered: register records the ID
// of a key before it checks the proof. When more than one object that is not Rejected
// claims the ID, the federation does not choose one: ambiguous says which claim it, and
// op is nil. The FederationOperator controller keeps IDs unique; this is the second wall.
func (r *SubmissionReconciler) operator(ctx context.Context, sub *fv1.Submission) (op *fv1.FederationOperator, ambiguous string, err error) {
	var ops fv1.FederationOperatorList
	if err := r.List(ctx, &ops, client.InNamespace(sub.Namespace), client.MatchingFields{federation.OperatorIDIndex: string(sub.Spec.OperatorID)}); err != nil {
		return nil, "", err
	}
	claims := slices.DeleteFunc(ops.Items, func(o fv1.FederationOperator) bool {
		return o.Status.Phase == fv1.PhaseRejected || o.Status.OperatorID != sub.Spec.OperatorID
	})
	switch {
	case len(claims) > 1:
		names := make([]string, len(claims))
		for i := range claims {
			names[i] = claims[i].Name
		}
		slices.Sort(names)
		return nil, fmt.Sprintf("FederationOperators %s all claim operatorID %s; the federation does not choose between them",
			strings.Join(names, ", "), sub.Spec.OperatorID), nil
	case len(claims) == 1 && (claims[0].Status.Phase == fv1.PhaseActive || claims[0].Status.Phase == fv1.PhaseWithdrawn):
		return &claims[0], "", nil
	}
	return nil, "", nil
}

// verify checks sub against op and its head. The verdict is the one write: the head is
// op's newest accepted submission, so accepting sub moves it. Of two submissions that
// continue one head only one can exist, since both would have the same name.
func (r *SubmissionReconciler) verify(ctx context.Context, sub *fv1.Submission, op *fv1.FederationOperator) (*event, error) {
	if reason, msg := checkSignature(sub, op); reason != "" {
		return refuse(sub, fv1.ConditionSignatureVerified, reason, msg), nil
	}
	sub.Status.Ed25519Verified = true
	sub.Status.SubmissionID = sub.Name
	setSubmissionCondition(sub, fv1.ConditionSignatureVerified, metav1.ConditionTrue, fv1.ReasonVerified,
		"the export header is signed by the operator's current key")

	if want := federation.SubmissionName(sub.Spec.OperatorID, sub.Spec.FirstSeq); sub.Name != want {
		return refuse(sub, fv1.ConditionContinuityVerified, fv1.ReasonNameNotCanonical, fmt.Sprintf(
			"a Submission of seq %d onward is named %s: only one export of a segment may be accepted, and the name is what ensures it",
			sub.Spec.FirstSeq, want)), nil
	}
	var own fv1.SubmissionList
	if err := r.List(ctx, &own, client.InNamespace(sub.Namespace), client.MatchingFields{federation.OperatorIDIndex: string(sub.Spec.OperatorID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	head := federation.HeadOf(op, own.Items)
	if isHead(head, sub) {
		r.accept(sub, "") // accepted before the status write failed or was lost
		return nil, nil
	}
	if reason, msg := federation.CheckContinuity(sub, head); reason != "" {
		return refuse(sub, fv1.ConditionContinuityVerified, reason, msg), nil
	}
	if msg, err := r.overPendingLimit(ctx, sub); msg != "" || err != nil {
		if err != nil {
			return nil, err
		}
		return refuse(sub, fv1.ConditionContinuityVerified, fv1.ReasonPendingLimitExceeded, msg), nil
	}
	previous := ""
	if head != nil {
		previous = head.Submission
	}
	r.accept(sub, previous)
	return &event{corev1.EventTypeNormal, fv1.ReasonVerified, "Verify",
		fmt.Sprintf("accepted seq %d..%d (entry count %d)", sub.Spec.FirstSeq, sub.Spec.LastSeq, sub.Spec.EntryCount)}, nil
}

// isHead reports whether head records sub itself, accepted before sub's own status write
// failed or was lost. A name is not enough: a Submission can be deleted and another made
// under its name, which normal continuity then refuses.
//
// A head written before heads had uid and chainSignature is compared on the fields it
// has: name, lastSeq, lastHMACHash and entryCount. That is safe because sub's header is
// signed by the operator's current key (checkSignature ran first) and an hmac_hash binds
// the whole chain through its seq: a submission ending at the head's lastSeq with its
// lastHMACHash and entry count claims nothing the head did not (its chain_signature is
// the HMAC of those two), while a fork changes some hash up to lastSeq and so the last
// one. Such a submission is accepted in place and the head does not move; the next
// acceptance writes a head with every field.
func isHead(head *fv1.SubmissionHead, sub *fv1.Submission) bool {
	if head == nil || head.Submission != sub.Name || head.LastSeq != sub.Spec.LastSeq ||
		head.LastHMACHash != sub.Spec.LastHMACHash || head.EntryCount != sub.Spec.EntryCount {
		return false
	}
	return (head.UID == "" || head.UID == string(sub.UID)) &&
		(head.ChainSignature == "" || head.ChainSignature == sub.Spec.ChainSignature)
}

// accept records that sub continues previous ("" for the operator's first).
func (r *SubmissionReconciler) accept(sub *fv1.Submission, previous string) {
	sub.Status.ContinuityVerified = true
	if previous != "" {
		sub.Status.PreviousSubmission = previous
	}
	msg := "the operator's first submission"
	if sub.Status.PreviousSubmission != "" {
		msg = "continues " + sub.Status.PreviousSubmission
	}
	setSubmissionCondition(sub, fv1.ConditionContinuityVerified, metav1.ConditionTrue, fv1.ReasonVerified, msg)
	setSubmissionCondition(sub, fv1.ConditionReady, metav1.ConditionTrue, fv1.ReasonVerified, "signed by the operator's current key and "+msg)
	setSubmissionCondition(sub, fv1.ConditionAnchored, metav1.ConditionFalse, fv1.ReasonPending, "waits for the next cross-anchor")
}

// DefaultMaxPendingPerOperator bounds an operator's pending submissions when its
// namespace has no Federation that says otherwise.
const DefaultMaxPendingPerOperator = 1000

// overPendingLimit returns why sub may not join its operator's pending submissions, or
// "" when it may. It counts from the cache, so two submissions accepted within the
// cache's lag of each other can pass it together.
func (r *SubmissionReconciler) overPendingLimit(ctx context.Context, sub *fv1.Submission) (string, error) {
	limit := int32(DefaultMaxPendingPerOperator)
	if fed, err := federation.NamespaceFederation(ctx, r.Client, sub.Namespace); err == nil && fed.Spec.MaxPendingPerOperator > 0 {
		limit = fed.Spec.MaxPendingPerOperator
	}
	var pending fv1.SubmissionList
	if err := r.List(ctx, &pending, client.InNamespace(sub.Namespace), client.MatchingFields{federation.PendingIndex: string(sub.Spec.OperatorID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	if len(pending.Items) < int(limit) {
		return "", nil
	}
	return fmt.Sprintf("operator %s already has %d submissions waiting for a cross-anchor (maxPendingPerOperator %d): send it again once they are anchored",
		sub.Spec.OperatorID, len(pending.Items), limit), nil
}

// checkSignature returns the reason and message when sub's header is not signed by op's
// current key, or sub's fields are not the header's.
func checkSignature(sub *fv1.Submission, op *fv1.FederationOperator) (reason, msg string) {
	pub, err := protocol.ParsePublicKeyPEM([]byte(sub.Spec.PublicKeyPEM))
	if err != nil {
		return fv1.ReasonSignatureInvalid, fmt.Sprintf("publicKeyPEM: %v", err)
	}
	if current := federation.MustKey(federation.CurrentKey(op).PublicKeyPEM); !pub.Equal(current) {
		return fv1.ReasonSignatureInvalid, "signed by a key that is not " + op.Name + "'s current key"
	}
	reason, _, msg = federation.VerifySubmissionHeader(&sub.Spec, pub)
	return reason, msg
}

func setSubmissionCondition(sub *fv1.Submission, t fv1.ConditionType, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&sub.Status.Conditions, metav1.Condition{Type: string(t), Status: status,
		Reason: reason, Message: msg, ObservedGeneration: sub.Generation})
}

// SetupWithManager requeues an operator's waiting submissions when the operator changes,
// and the pending submissions a new CrossAnchor covers. The indexes it reads through are
// federation.RegisterIndexes', which the manager adds first.
func (r *SubmissionReconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&fv1.Submission{}).
		Watches(&fv1.FederationOperator{}, handler.EnqueueRequestsFromMapFunc(r.waiting)).
		Watches(&fv1.CrossAnchor{}, handler.EnqueueRequestsFromMapFunc(r.coveredSubmissions), builder.WithPredicates(anchorMade)).
		// Submissions of different operators are independent, and two of one operator
		// are kept in order by the head's optimistic concurrency.
		WithOptions(controller.Options{MaxConcurrentReconciles: submissionWorkers}).
		Named("submission").
		Complete(r)
}

// waiting maps an operator to its submissions without a verdict.
func (r *SubmissionReconciler) waiting(ctx context.Context, o client.Object) []reconcile.Request {
	id := o.(*fv1.FederationOperator).Status.OperatorID
	if id == "" {
		return nil
	}
	var subs fv1.SubmissionList
	if err := r.List(ctx, &subs, client.InNamespace(o.GetNamespace()), client.MatchingFields{federation.OperatorIDIndex: string(id)}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range subs.Items {
		if !federation.Decided(&subs.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&subs.Items[i])})
		}
	}
	return reqs
}
