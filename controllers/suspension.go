package controllers

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Suspension: the Federation's administrators suspend an operator through GitOps
// (spec.suspendedOperators) or the admin API (status.apiSuspensions); the operator is
// suspended while either names it (fv1.Federation.Suspension). The FederationOperator
// controller follows that union into status.phase and appends a SuspensionRecord, logged
// under the federation key, at every change: of the phase, and, while suspended, of the
// sources or the reason, so that the log always says who suspends an operator and why (a
// restore puts the API's suspensions back from it: federation_restore.go). Nothing in the operator's own object decides
// whether it is suspended: the submit API and the anchor run read the Federation.

// maxSuspensionRecords is how many suspension records an operator's status keeps.
const maxSuspensionRecords = 64

// ReasonResumed means the federation resumed a suspended operator.
const ReasonResumed = "Resumed"

// followSuspension moves an Active or Suspended fo to the phase its Federation's
// suspension lists give it: the namespace's Federation, the oldest when there are several
// (federation.NamespaceFederation), so that another Federation created beside it changes
// no operator's phase. Without a Federation the phase stays. A change of phase, or of a
// suspension's sources or reason, appends a record, unless the last record already says
// so (a status edited by hand is put back without a new record).
func (r *FederationOperatorReconciler) followSuspension(ctx context.Context, fo *fv1.FederationOperator) (*event, error) {
	fed := r.namespaceFederation(ctx, fo.Namespace)
	if fed == nil {
		return nil, nil // nobody decides: the phase stays
	}
	reason, sources := fed.Suspension(fo.Status.OperatorID)
	suspended := len(sources) > 0
	last := fv1.SuspensionRecord{Action: fv1.ActionResume}
	if n := len(fo.Status.Suspensions); n > 0 {
		last = fo.Status.Suspensions[n-1]
	}
	at := fv1.Timestamp(r.now().UTC().Format(time.RFC3339))
	if suspended {
		was := fo.Status.Phase == fv1.PhaseSuspended
		fo.Status.Phase = fv1.PhaseSuspended
		meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady), Status: metav1.ConditionFalse,
			Reason: fv1.ReasonSuspended, Message: "suspended by the federation: " + reason, ObservedGeneration: fo.Generation})
		if last.Action == fv1.ActionSuspend && last.Reason == reason && slices.Equal(last.Sources, sources) {
			return nil, nil
		}
		appendSuspension(fo, fv1.SuspensionRecord{Action: fv1.ActionSuspend, At: at, Reason: reason, Sources: sources})
		if was && last.Action == fv1.ActionSuspend {
			return &event{corev1.EventTypeNormal, fv1.ReasonSuspended, "Suspend", fmt.Sprintf("still suspended, now by %v: %s", sources, reason)}, nil
		}
		return &event{corev1.EventTypeWarning, fv1.ReasonSuspended, "Suspend", fmt.Sprintf("suspended (%v): %s", sources, reason)}, nil
	}
	if fo.Status.Phase != fv1.PhaseSuspended {
		return nil, nil
	}
	fo.Status.Phase = fv1.PhaseActive
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady), Status: metav1.ConditionTrue,
		Reason: ReasonResumed, Message: "resumed by the federation; the head is unchanged", ObservedGeneration: fo.Generation})
	if last.Action == fv1.ActionResume {
		return nil, nil
	}
	appendSuspension(fo, fv1.SuspensionRecord{Action: fv1.ActionResume, At: at})
	return &event{corev1.EventTypeNormal, ReasonResumed, "Resume", "resumed; its next submission continues its head"}, nil
}

// appendSuspension appends rec to fo's records, dropping the oldest logged ones past
// maxSuspensionRecords (the log keeps them; an unlogged one is never dropped).
func appendSuspension(fo *fv1.FederationOperator, rec fv1.SuspensionRecord) {
	fo.Status.Suspensions = append(fo.Status.Suspensions, rec)
	for len(fo.Status.Suspensions) > maxSuspensionRecords && fo.Status.Suspensions[0].LogEntry != nil {
		fo.Status.Suspensions = fo.Status.Suspensions[1:]
	}
}

// suspensionRecord is the protocol record that logs rec of operator id.
func suspensionRecord(federation, id string, rec *fv1.SuspensionRecord) protocol.SuspensionRecord {
	out := protocol.SuspensionRecord{Type: protocol.RecordSuspension, Federation: federation, OperatorID: id,
		At: string(rec.At), Reason: rec.Reason, Sources: append([]string{}, rec.Sources...)}
	if rec.Action == fv1.ActionResume {
		out.Type = protocol.RecordResumption
	}
	return out
}
