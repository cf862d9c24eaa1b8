package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// This file keeps a Federation's Witnessed condition: what its members' witnesses made of
// the embedded log's latest checkpoint (tlog's witnessing loop asks them). The condition
// changes, and its Events are recorded, only when the verdict does: a witness that stays
// down is one Warning, not one a retry.

// maxSplitViewMessage bounds how much of a witness's refusal the condition quotes; the
// whole of it (both checkpoints) is the witness's to serve, GET <url>/conflicts/<origin>.
const maxSplitViewMessage = 1024

// witnessCondition sets fed's Witnessed condition from its log's witnessing, and appends
// an Event when its reason changes.
func (r *FederationReconciler) witnessCondition(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) {
	if fed.Spec.TransparencyLog.Witnesses == nil {
		meta.RemoveStatusCondition(&fed.Status.Conditions, string(fv1.ConditionWitnessed))
		return
	}
	status, reason, msg := metav1.ConditionFalse, fv1.ReasonWitnessQuorumNotMet, ""
	if _, err := federation.WitnessPolicy(fed); err != nil {
		reason, msg = fv1.ReasonWitnessPolicyInvalid, err.Error()
	} else if log, err := r.Logs.For(ctx, r.Client, fed); err != nil {
		msg = "the embedded log is not open: " + err.Error()
	} else if e, ok := log.(*tlog.Embedded); ok {
		if s, ok := e.Witnessing(); ok {
			status, reason, msg = witnessVerdict(s)
		}
	}
	before := meta.FindStatusCondition(fed.Status.Conditions, string(fv1.ConditionWitnessed))
	r.setCondition(fed, fv1.ConditionWitnessed, status, reason, msg)
	// An Event when the verdict changes; not for a policy that is new, whose witnesses
	// have not been asked yet, unless one refused a split view.
	if before != nil && before.Reason == reason || before == nil && reason != fv1.ReasonSplitViewRefused {
		return
	}
	kind := corev1.EventTypeWarning
	if status == metav1.ConditionTrue {
		kind = corev1.EventTypeNormal
	}
	*evs = append(*evs, federationEvent{event{kind, reason, "Witness", msg}, nil})
}

// witnessVerdict is the condition a witnessing status calls for.
func witnessVerdict(s tlog.WitnessingStatus) (metav1.ConditionStatus, string, string) {
	var cosigned, missing, split []string
	for _, w := range s.Witnesses {
		switch {
		case w.SplitView != "":
			split = append(split, fmt.Sprintf("%s refused the checkpoint of size %d: %s", w.Name, s.Size, w.SplitView))
		case w.CosignedSize == s.Size && s.Size > 0:
			cosigned = append(cosigned, w.Name)
		case w.Error != "":
			missing = append(missing, fmt.Sprintf("%s: %s", w.Name, w.Error))
		default:
			missing = append(missing, w.Name+": not answered yet")
		}
	}
	if len(split) > 0 {
		msg := strings.Join(split, "; ")
		if len(msg) > maxSplitViewMessage {
			msg = msg[:maxSplitViewMessage] + "…"
		}
		return metav1.ConditionFalse, fv1.ReasonSplitViewRefused, msg
	}
	if s.Satisfied() {
		return metav1.ConditionTrue, fv1.ReasonWitnessed, fmt.Sprintf("the checkpoint of size %d is cosigned by %s; the policy asks %s",
			s.Size, strings.Join(cosigned, ", "), s.Policy)
	}
	by := "no witness"
	if len(cosigned) > 0 {
		by = strings.Join(cosigned, ", ")
	}
	return metav1.ConditionFalse, fv1.ReasonWitnessQuorumNotMet, fmt.Sprintf("the checkpoint of size %d is cosigned by %s; the policy asks %s; %s",
		s.Size, by, s.Policy, strings.Join(missing, "; "))
}

// witnessEvents turns a log's witnessing changes into reconciles of its Federation.
type witnessEvents chan crevent.GenericEvent

// notify queues a reconcile of name, or drops it when the queue is full: the Federation
// is reconciled at least every witnessRecheck while it has witnesses.
func (ch witnessEvents) notify(name types.NamespacedName) {
	fed := &fv1.Federation{}
	fed.Name, fed.Namespace = name.Name, name.Namespace
	select {
	case ch <- crevent.GenericEvent{Object: fed}:
	default:
	}
}
