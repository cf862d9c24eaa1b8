package controllers

import (
	"context"
	"fmt"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// An operator ID is forever: unique across every FederationOperator and every key in every
// key history, withdrawn operators included, so no key ever held registers again or is
// rotated to by another operator. A registration record, proof of possession included, is
// public in the transparency log, so a key's past holder must be found from its key
// history, not from the key it holds now.

// operatorKeyIndex indexes FederationOperators by the operator ID of every key they hold
// or held: each key of status.keyHistory, and spec.publicKeyPEM (a key applied but not yet
// registered, or not yet rotated to). It finds every past holder of a key without listing
// every operator.
const operatorKeyIndex = "keys.operatorID"

// indexOperatorKeys adds operatorKeyIndex to mgr.
func indexOperatorKeys(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &fv1.FederationOperator{}, operatorKeyIndex, func(o client.Object) []string {
		return keyIDs(o.(*fv1.FederationOperator))
	})
}

// keyIDs returns the operator IDs of every key fo holds or held, and of its spec's key,
// each once. Keys that do not parse have none.
func keyIDs(fo *fv1.FederationOperator) []string {
	ids := make([]string, 0, len(fo.Status.KeyHistory)+1)
	for _, pemText := range append(keysHeld(fo), fo.Spec.PublicKeyPEM) {
		if id := keyID(pemText); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// keysHeld lists the keys of fo's key history, oldest first.
func keysHeld(fo *fv1.FederationOperator) []fv1.PublicKeyPEM {
	keys := make([]fv1.PublicKeyPEM, len(fo.Status.KeyHistory))
	for i, k := range fo.Status.KeyHistory {
		keys[i] = k.PublicKeyPEM
	}
	return keys
}

// keyID is the operator ID of pemText's key, "" if it does not parse.
func keyID(pemText fv1.PublicKeyPEM) string {
	pub, err := protocol.ParsePublicKeyPEM([]byte(pemText))
	if err != nil {
		return ""
	}
	return protocol.OperatorID(pub)
}

// Registered reports whether fo passed registration (it is Active, Suspended or
// Withdrawn): only then is its key history a record of keys it held.
func Registered(fo *fv1.FederationOperator) bool {
	switch fo.Status.Phase {
	case fv1.PhaseActive, fv1.PhaseSuspended, fv1.PhaseWithdrawn:
		return true
	}
	return false
}

// heldKey reports whether registered fo holds or held the key whose operator ID is id.
func heldKey(fo *fv1.FederationOperator, id string) bool {
	return slices.ContainsFunc(keysHeld(fo), func(k fv1.PublicKeyPEM) bool { return keyID(k) == id })
}

// provesPossession reports whether fo's proof of possession verifies under its spec key.
func provesPossession(fo *fv1.FederationOperator) bool {
	pub, err := protocol.ParsePublicKeyPEM([]byte(fo.Spec.PublicKeyPEM))
	return err == nil && protocol.VerifyRegistration(pub, fo.Spec.OrgName, string(fo.Spec.ProofOfPossession)) == nil
}

// keyHolder returns the operator other than fo that holds, held or first claimed the key
// whose operator ID is id (see holderOf), found through operatorKeyIndex; nil when there
// is none.
func (r *FederationOperatorReconciler) keyHolder(ctx context.Context, fo *fv1.FederationOperator, id string) (*fv1.FederationOperator, error) {
	var same fv1.FederationOperatorList
	if err := r.List(ctx, &same, client.InNamespace(fo.Namespace), client.MatchingFields{operatorKeyIndex: id}); err != nil {
		return nil, err
	}
	return holderOf(fo, id, same.Items), nil
}

// KeyHolder returns the operator other than fo that holds, held or first claimed the key
// whose operator ID is id, by the rule the FederationOperator controller registers and
// rotates by; nil when there is none. It lists every FederationOperator in fo's namespace
// from c, so it needs no index: the admission webhooks call it with the API server's
// reader, where the object just written is already seen.
func KeyHolder(ctx context.Context, c client.Reader, fo *fv1.FederationOperator, id string) (*fv1.FederationOperator, error) {
	var all fv1.FederationOperatorList
	if err := c.List(ctx, &all, client.InNamespace(fo.Namespace)); err != nil {
		return nil, err
	}
	return holderOf(fo, id, all.Items), nil
}

// holderOf returns the operator of ops other than fo that holds, held or first claimed
// the key whose operator ID is id; nil when there is none.
//
// A registered operator (Active, Suspended or Withdrawn) holds every key of its key
// history for good, and comes before any claim. An operator not registered yet, or
// Rejected, claims the key in its spec if its proof of possession verifies; of those the
// first created (by name on a tie) holds it, so that of two objects applied together one
// registers. A registered operator's spec key that it has not rotated to is no claim:
// anyone can write a public key into a spec.
func holderOf(fo *fv1.FederationOperator, id string, ops []fv1.FederationOperator) *fv1.FederationOperator {
	var first *fv1.FederationOperator
	for i := range ops {
		o := &ops[i]
		switch {
		case Registered(o):
			if o.Name != fo.Name && heldKey(o, id) {
				return o
			}
		case keyID(o.Spec.PublicKeyPEM) == id && provesPossession(o):
			if first == nil || createdBefore(o, first) {
				first = o
			}
		}
	}
	if first == nil || first.Name == fo.Name {
		return nil
	}
	return first
}

// createdBefore orders operators by creation, then by name.
func createdBefore(a, b *fv1.FederationOperator) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// DescribeHolder names holder, as KeyHolder returns it, for a message: its name, and its
// operator ID once it has one.
func DescribeHolder(holder *fv1.FederationOperator) string {
	if holder.Status.OperatorID == "" {
		return "operator " + holder.Name
	}
	return fmt.Sprintf("operator %s (%s)", holder.Name, holder.Status.OperatorID)
}

// sameKey maps an operator to the other operators indexed under any of its keys: when it
// is deleted or rotates, a Rejected duplicate may become a key's holder, or a new holder
// refuse another's pending claim.
func (r *FederationOperatorReconciler) sameKey(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, id := range keyIDs(o.(*fv1.FederationOperator)) {
		var same fv1.FederationOperatorList
		if err := r.List(ctx, &same, client.InNamespace(o.GetNamespace()), client.MatchingFields{operatorKeyIndex: id}); err != nil {
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

// RegisteredOperator returns the registered operator (see Registered) in namespace whose
// status.operatorID is id, through the manager cache's operator-ID index that
// SubmissionReconciler.SetupWithManager adds; nil when there is none. Of more than one
// claim (which the FederationOperator controller prevents) it returns none: the
// federation does not choose.
func RegisteredOperator(ctx context.Context, c client.Reader, namespace, id string) (*fv1.FederationOperator, error) {
	var same fv1.FederationOperatorList
	if err := c.List(ctx, &same, client.InNamespace(namespace), client.MatchingFields{operatorIDIndex: id}); err != nil {
		return nil, err
	}
	var found *fv1.FederationOperator
	for i := range same.Items {
		if o := &same.Items[i]; string(o.Status.OperatorID) == id && Registered(o) {
			if found != nil {
				return nil, nil
			}
			found = o
		}
	}
	return found, nil
}
