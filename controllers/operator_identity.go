package controllers

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// An operator ID is forever: unique across every FederationOperator and every key in every
// key history, withdrawn operators included, so no key ever held registers again or is
// rotated to by another operator. A registration record, proof of possession included, is
// public in the transparency log, so a key's past holder must be found from its key
// history, not from the key it holds now.

// keyHolder returns the operator other than fo that holds, held or first claimed the key
// whose operator ID is id (see federation.HolderOf), found through federation.OperatorKeyIndex; nil when there
// is none.
func (r *FederationOperatorReconciler) keyHolder(ctx context.Context, fo *fv1.FederationOperator, id string) (*fv1.FederationOperator, error) {
	var same fv1.FederationOperatorList
	if err := r.List(ctx, &same, client.InNamespace(fo.Namespace), client.MatchingFields{federation.OperatorKeyIndex: id}); err != nil {
		return nil, err
	}
	return federation.HolderOf(fo, id, same.Items), nil
}

// sameKey maps an operator to the other operators indexed under any of its keys: when it
// is deleted or rotates, a Rejected duplicate may become a key's holder, or a new holder
// refuse another's pending claim.
func (r *FederationOperatorReconciler) sameKey(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, id := range federation.KeyIDs(o.(*fv1.FederationOperator)) {
		var same fv1.FederationOperatorList
		if err := r.List(ctx, &same, client.InNamespace(o.GetNamespace()), client.MatchingFields{federation.OperatorKeyIndex: id}); err != nil {
			return nil
		}
		for i := range same.Items {
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&same.Items[i])}
			if same.Items[i].Name != o.GetName() && !slices.Contains(reqs, req) {
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}

// registrationChallenge is the challenge proof fo's registration record logs: its
// spec.challengeProof when that is its proof (no proofOfPossession), else nil.
func registrationChallenge(fo *fv1.FederationOperator) *protocol.SignedChallenge {
	cp := fo.Spec.ChallengeProof
	if cp == nil || fo.Spec.ProofOfPossession != "" {
		return nil
	}
	return &protocol.SignedChallenge{Nonce: cp.Nonce, Signature: string(cp.Signature)}
}
