package controllers

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// An operator's verdicts outlive its object. A restore applies the FederationOperators
// again with their spec alone (status is not restored), or not at all; an object may also
// come back older than the log (an etcd snapshot). Registering such an object anew would
// undo what the federation decided: an operator that rotated its key comes back Rejected
// (its proof of possession names its first key), a withdrawn one Active (its withdrawal is
// older than five minutes), and, worse, a key it rotated out (because it leaked) registers
// again, under its operator ID. So the log decides first: what the federation's record
// book says, verified against the log (recordbook.go), is the operator's history, and an
// object only ever catches up with it.

// ReasonRestoredFromLog means the operator's registration, key history, withdrawal or
// suspension was taken from the federation's transparency log, where the federation
// recorded it before.
const ReasonRestoredFromLog = "RestoredFromLog"

// restoreWait is how soon an operator the log knows is looked at again while its
// Federation has not yet restored its own suspension lists from the log.
const restoreWait = time.Second

// fromLog brings fo's status to what the log records of its key. For an operator not
// registered yet, whose key the log says an operator held: the object is that operator
// (its current key, the logged proof of possession, and its withdrawal if it withdrew)
// and takes its logged history, phase and last suspension; or it is not, and is rejected
// as a duplicate. For a registered operator, a status older than the log gets the
// rotations and the withdrawal it lacks. decided means fo's phase needs no other step;
// wait, when set, is how soon to look again.
func (r *FederationOperatorReconciler) fromLog(ctx context.Context, fo *fv1.FederationOperator) (decided bool, ev *event, wait time.Duration, err error) {
	if r.Logs == nil {
		return false, nil, 0, nil
	}
	fed := r.namespaceFederation(ctx, fo.Namespace)
	if fed == nil {
		return false, nil, 0, nil
	}
	logged, lerr := r.Logs.Logged(ctx, r.Client, fed)
	if federation.Registered(fo) {
		if lerr == nil { // else its status stands, looked at again at the next change
			ev, decided = catchUp(fo, logged.Operator(fo.Status.OperatorID))
		}
		return decided, ev, 0, nil
	}
	if lerr != nil {
		// Which keys were held is in the log: nothing registers until it can be read.
		logf.FromContext(ctx).Info("Registration waits for the federation's log records", "error", lerr.Error())
		return true, nil, logRetry, nil
	}
	id := federation.KeyID(fo.Spec.PublicKeyPEM)
	op := logged.Holder(id)
	if op == nil {
		return false, nil, 0, nil // new to the log: registration decides
	}
	if why := notTheLogged(fo, op, id); why != "" {
		fo.Status.OperatorID = fv1.OperatorID(id)
		return true, r.reject(fo, fv1.ReasonDuplicateKey, why), 0, nil
	}
	if holder, err := r.keyHolder(ctx, fo, id); err != nil || holder != nil {
		return false, nil, 0, err // another object came back as op first: registration rejects fo
	}
	if op.Withdrawal == nil && fed.Status.GenesisLogEntry == nil {
		// The Federation restores the API's suspensions before its genesis record: until
		// then, an operator the API suspended would be resumed.
		return true, nil, restoreWait, nil
	}
	return true, adopt(fo, op), 0, nil
}

// notTheLogged says why fo, claiming key id that the log says op held, is not op coming
// back; "" when it is: it claims op's current key with op's logged proof of possession,
// and carries op's withdrawal if op withdrew.
func notTheLogged(fo *fv1.FederationOperator, op *federation.LoggedOperator, id string) string {
	at := op.RegistrationEntry.LogIndex
	switch {
	case op.KeyIndex(id) < len(op.Keys)-1:
		return fmt.Sprintf("the federation's log records that operator %s held this key and rotated it out (log index %d): a key rotated out never comes back",
			op.OperatorID, op.Keys[op.KeyIndex(id)+1].LogEntry.LogIndex)
	case string(fo.Spec.ProofOfPossession) != op.Registration.ProofOfPossession ||
		!reflect.DeepEqual(registrationChallenge(fo), op.Registration.Challenge):
		return fmt.Sprintf("the federation's log records operator %s's registration with another proof of possession (log index %d): an operator ID is never registered twice",
			op.OperatorID, at)
	case op.Withdrawal != nil && (fo.Spec.Withdrawal == nil || string(fo.Spec.Withdrawal.At) != op.Withdrawal.At ||
		string(fo.Spec.Withdrawal.Signature) != op.Withdrawal.Signature):
		return fmt.Sprintf("the federation's log records that operator %s withdrew (log index %d): an operator ID is never registered twice",
			op.OperatorID, op.WithdrawalEntry.LogIndex)
	}
	return ""
}

// adopt gives fo the status the log records of op: registered then, its keys, its last
// suspension or resumption, its withdrawal.
func adopt(fo *fv1.FederationOperator, op *federation.LoggedOperator) *event {
	reg := op.RegistrationEntry
	registeredAt := op.Keys[0].ValidFrom
	fo.Status.OperatorID = op.OperatorID
	fo.Status.RegisteredAt = &registeredAt
	fo.Status.RegistrationLogEntry = &reg
	fo.Status.KeyHistory = make([]fv1.KeyRecord, len(op.Keys))
	for i := range op.Keys {
		op.Keys[i].DeepCopyInto(&fo.Status.KeyHistory[i])
	}
	fo.Status.Suspensions = nil
	msg := fmt.Sprintf("registered as the federation's log records it (log index %d), with %d keys", reg.LogIndex, len(op.Keys))
	switch s := op.Suspension; {
	case op.Withdrawal != nil:
		entry := *op.WithdrawalEntry
		fo.Status.Phase = fv1.PhaseWithdrawn
		fo.Status.WithdrawalLogEntry = &entry
		msg += fmt.Sprintf(", withdrawn at %s (log index %d)", op.Withdrawal.At, entry.LogIndex)
		setRestoredConditions(fo, metav1.ConditionFalse, fv1.ReasonWithdrawn, msg+"; past anchors keep this operator")
	case s != nil && s.Action == fv1.ActionSuspend:
		fo.Status.Phase = fv1.PhaseSuspended
		fo.Status.Suspensions = []fv1.SuspensionRecord{*s.DeepCopy()}
		msg += fmt.Sprintf(", suspended (%v, log index %d): %s", s.Sources, s.LogEntry.LogIndex, s.Reason)
		setRestoredConditions(fo, metav1.ConditionFalse, fv1.ReasonSuspended, msg)
	default:
		fo.Status.Phase = fv1.PhaseActive
		if s != nil {
			fo.Status.Suspensions = []fv1.SuspensionRecord{*s.DeepCopy()}
		}
		setRestoredConditions(fo, metav1.ConditionTrue, ReasonRestoredFromLog, msg)
	}
	return &event{corev1.EventTypeNormal, ReasonRestoredFromLog, "Restore", msg}
}

// catchUp adds to registered fo's status what the log records of it and the status lacks:
// key rotations after its current key, and its withdrawal. decided means fo is now
// Withdrawn.
func catchUp(fo *fv1.FederationOperator, op *federation.LoggedOperator) (ev *event, decided bool) {
	if op == nil {
		return nil, false
	}
	n := len(fo.Status.KeyHistory)
	if n > 0 && len(op.Keys) > n && slices.Equal(keyPEMs(fo.Status.KeyHistory), keyPEMs(op.Keys[:n])) {
		fo.Status.KeyHistory[n-1].ValidUntil = op.Keys[n-1].ValidUntil.DeepCopy()
		for _, k := range op.Keys[n:] {
			fo.Status.KeyHistory = append(fo.Status.KeyHistory, *k.DeepCopy())
		}
		msg := fmt.Sprintf("the federation's log records %d key rotations this status lacked; the current key is %s", len(op.Keys)-n, federation.CurrentKey(fo).Fingerprint)
		meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
			Status: metav1.ConditionTrue, Reason: ReasonRestoredFromLog, Message: msg, ObservedGeneration: fo.Generation})
		ev = &event{corev1.EventTypeNormal, ReasonRestoredFromLog, "Restore", msg}
	}
	if op.Withdrawal != nil && fo.Status.Phase != fv1.PhaseWithdrawn {
		entry := *op.WithdrawalEntry
		fo.Status.Phase = fv1.PhaseWithdrawn
		fo.Status.WithdrawalLogEntry = &entry
		msg := fmt.Sprintf("the federation's log records this operator's withdrawal at %s (log index %d)", op.Withdrawal.At, entry.LogIndex)
		setRestoredConditions(fo, metav1.ConditionFalse, fv1.ReasonWithdrawn, msg+"; past anchors keep this operator")
		return &event{corev1.EventTypeNormal, ReasonRestoredFromLog, "Restore", msg}, true
	}
	return ev, false
}

// keyPEMs lists the keys of a key history.
func keyPEMs(keys []fv1.KeyRecord) []fv1.PublicKeyPEM {
	out := make([]fv1.PublicKeyPEM, len(keys))
	for i, k := range keys {
		out[i] = k.PublicKeyPEM
	}
	return out
}

// setRestoredConditions sets Ready as status and reason say, and SignatureVerified True:
// the log holds the federation's signed records of it.
func setRestoredConditions(fo *fv1.FederationOperator, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady), Status: status,
		Reason: reason, Message: msg, ObservedGeneration: fo.Generation})
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified),
		Status: metav1.ConditionTrue, Reason: ReasonRestoredFromLog, Message: msg, ObservedGeneration: fo.Generation})
}
