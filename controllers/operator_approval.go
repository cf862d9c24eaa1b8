package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// Approval: a Federation with spec.registration: approval registers no operator on its
// own word. An operator whose proof of possession verifies and whose key is its own
// becomes Pending: its operator ID is set (so its key is claimed, and a later claim is
// Rejected), but it has no registeredAt, no key history and no registration record, and
// the Submission controller judges none of its submissions. It is registered (Active, its
// record logged) once the Federation's spec.approvedOperators (GitOps) or
// status.apiApprovals (POST /federation/operator/{id}/approve) names it. The decision is
// taken once: a Pending operator waits for an approval whatever the mode later says, so
// switching the Federation back to open approves nobody, and removing an approval from a
// registered operator changes nothing (suspend it instead). The Federation is the
// namespace's (federation.NamespaceFederation: the oldest); a namespace without one
// registers as open, as before approval existed, and keeps a Pending operator waiting.

// awaitApproval decides whether fo, whose proof verified and whose key is its own, waits
// for its Federation's approval. When it does, fo is made Pending and wait is true; when
// an approval lets it through, status.approvedBy records the approving sources.
func (r *FederationOperatorReconciler) awaitApproval(ctx context.Context, fo *fv1.FederationOperator) (ev *event, wait bool) {
	fed := r.namespaceFederation(ctx, fo.Namespace) // nil: nobody approves, and nothing asks for approval
	needed := fo.Status.Phase == fv1.PhasePending || (fed != nil && fed.RequiresApproval())
	if !needed {
		fo.Status.ApprovedBy = nil
		return nil, false
	}
	if fed != nil {
		if sources := fed.Approval(fo.Status.OperatorID); len(sources) > 0 {
			fo.Status.ApprovedBy = sources
			return nil, false
		}
	}
	was := fo.Status.Phase
	fo.Status.Phase = fv1.PhasePending
	fo.Status.ApprovedBy = nil
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionSignatureVerified), Status: metav1.ConditionTrue,
		Reason: fv1.ReasonVerified, Message: "the proof of possession verifies and the key is this operator's", ObservedGeneration: fo.Generation})
	meta.SetStatusCondition(&fo.Status.Conditions, metav1.Condition{Type: string(fv1.ConditionReady), Status: metav1.ConditionFalse,
		Reason: fv1.ReasonAwaitingApproval, ObservedGeneration: fo.Generation,
		Message: "awaits the federation's approval (spec.registration is approval): an administrator adds " + string(fo.Status.OperatorID) +
			" to the Federation's spec.approvedOperators or calls POST /federation/operator/" + string(fo.Status.OperatorID) + "/approve"})
	if was == fv1.PhasePending {
		return nil, true
	}
	return &event{corev1.EventTypeNormal, fv1.ReasonAwaitingApproval, "Register",
		"awaits the federation's approval as " + string(fo.Status.OperatorID)}, true
}

// namespaceFederation is the Federation the operators of namespace follow
// (federation.NamespaceFederation: the oldest of several), or nil when it has none. It is
// the cache's; when the cache has none, the API server's (APIReader), since the cache
// fills each kind from its own watch and an operator applied just after its Federation
// (a restore, a GitOps sync) may reach this controller first: registered against no
// Federation, it would skip the approval the Federation asks for and the log's record of
// which keys were held. The API server is asked only in a namespace without a Federation
// in the cache, and its error counts as none, as the cache's does.
func (r *FederationOperatorReconciler) namespaceFederation(ctx context.Context, namespace string) *fv1.Federation {
	fed, err := federation.NamespaceFederation(ctx, r.Client, namespace)
	if err != nil && r.APIReader != nil {
		fed, err = federation.NamespaceFederation(ctx, r.APIReader, namespace)
	}
	if err != nil {
		return nil
	}
	return fed
}
