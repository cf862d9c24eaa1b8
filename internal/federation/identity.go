package federation

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// KeyIDs returns the operator IDs of every key fo holds or held, and of its spec's key,
// each once. Keys that do not parse have none.
func KeyIDs(fo *fv1.FederationOperator) []string {
	ids := make([]string, 0, len(fo.Status.KeyHistory)+1)
	for _, pemText := range append(KeysHeld(fo), fo.Spec.PublicKeyPEM) {
		if id := KeyID(pemText); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// KeysHeld lists the keys of fo's key history, oldest first.
func KeysHeld(fo *fv1.FederationOperator) []fv1.PublicKeyPEM {
	keys := make([]fv1.PublicKeyPEM, len(fo.Status.KeyHistory))
	for i, k := range fo.Status.KeyHistory {
		keys[i] = k.PublicKeyPEM
	}
	return keys
}

// KeyID is the operator ID of pemText's key, "" if it does not parse.
func KeyID(pemText fv1.PublicKeyPEM) string {
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

// HeldKey reports whether registered fo holds or held the key whose operator ID is id.
func HeldKey(fo *fv1.FederationOperator, id string) bool {
	return slices.ContainsFunc(KeysHeld(fo), func(k fv1.PublicKeyPEM) bool { return KeyID(k) == id })
}

// provesPossession reports whether fo's proof of possession verifies under its spec key.
func provesPossession(fo *fv1.FederationOperator) bool {
	pub, err := protocol.ParsePublicKeyPEM([]byte(fo.Spec.PublicKeyPEM))
	return err == nil && ProvesPossession(fo, pub) == nil
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
	return HolderOf(fo, id, all.Items), nil
}

// HolderOf returns the operator of ops other than fo that holds, held or first claimed
// the key whose operator ID is id; nil when there is none.
//
// A registered operator (Active, Suspended or Withdrawn) holds every key of its key
// history for good, and comes before any claim. An operator not registered yet, or
// Rejected, claims the key in its spec if its proof of possession verifies; of those the
// first created (by name on a tie) holds it, so that of two objects applied together one
// registers. A registered operator's spec key that it has not rotated to is no claim:
// anyone can write a public key into a spec.
func HolderOf(fo *fv1.FederationOperator, id string, ops []fv1.FederationOperator) *fv1.FederationOperator {
	var first *fv1.FederationOperator
	for i := range ops {
		o := &ops[i]
		switch {
		case Registered(o):
			if o.Name != fo.Name && HeldKey(o, id) {
				return o
			}
		case KeyID(o.Spec.PublicKeyPEM) == id && provesPossession(o) && !refusedChallenge(o):
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

// refusedChallenge reports whether fo was rejected because the challenge of its
// challengeProof was not the federation's to take for it (CheckChallengeUse): its
// signature verifies, yet it claims nothing, or a challenge signature captured from a
// registration and applied first would block that registration.
func refusedChallenge(fo *fv1.FederationOperator) bool {
	if ProofField(fo) != "challengeProof" || fo.Status.Phase != fv1.PhaseRejected {
		return false
	}
	ready := meta.FindStatusCondition(fo.Status.Conditions, string(fv1.ConditionReady))
	return ready != nil && ready.Reason == fv1.ReasonSignatureInvalid
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

// RegisteredOperator returns the registered operator (see Registered) in namespace whose
// status.operatorID is id, through the manager cache's OperatorIDIndex
// (RegisterIndexes); nil when there is none. Of more than one claim (which the
// FederationOperator controller prevents) it returns none: the federation does not
// choose. opts are added to the List: a caller that never writes the result may pass
// client.UnsafeDisableDeepCopy, and then must not.
func RegisteredOperator(ctx context.Context, c client.Reader, namespace, id string, opts ...client.ListOption) (*fv1.FederationOperator, error) {
	var same fv1.FederationOperatorList
	if err := c.List(ctx, &same, append([]client.ListOption{client.InNamespace(namespace), client.MatchingFields{OperatorIDIndex: id}}, opts...)...); err != nil {
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

// MustKey parses a key the API server's validation and the controller have both
// accepted before; nil if it somehow does not parse, which no signature verifies under.
func MustKey(pemText fv1.PublicKeyPEM) ed25519.PublicKey {
	pub, _ := protocol.ParsePublicKeyPEM([]byte(pemText))
	return pub
}

// CurrentKey is the key fo holds now: the last of its key history.
func CurrentKey(fo *fv1.FederationOperator) *fv1.KeyRecord {
	return &fo.Status.KeyHistory[len(fo.Status.KeyHistory)-1]
}

// CheckRotation checks the key rotation a registered fo asks for by a spec.publicKeyPEM
// other than its current key: spec.keyRotation must be signed by the current key and the
// new one within five minutes of now, and fo must never have held the new key. It returns
// the new key, or the reason and message of the refusal. Whether another operator holds
// or held the new key is KeyHolder's to say.
func CheckRotation(fo *fv1.FederationOperator, now time.Time) (newPub ed25519.PublicKey, reason, msg string) {
	if len(fo.Status.KeyHistory) == 0 {
		return nil, fv1.ReasonKeyRotationInvalid, "the operator has no current key to rotate from"
	}
	currentPub := MustKey(CurrentKey(fo).PublicKeyPEM)
	err := errors.New("publicKeyPEM changed without a keyRotation")
	if kr := fo.Spec.KeyRotation; kr != nil {
		newPub, err = protocol.KeyRotation{OperatorID: protocol.OperatorID(currentPub), NewPublicKey: string(fo.Spec.PublicKeyPEM),
			RotationAt: string(kr.RotationAt), OldKeySignature: string(kr.OldKeySignature), NewKeySignature: string(kr.NewKeySignature),
		}.Verify(currentPub, now)
	}
	if err != nil {
		return nil, fv1.ReasonKeyRotationInvalid, err.Error()
	}
	if HeldKey(fo, protocol.OperatorID(newPub)) {
		return nil, fv1.ReasonKeyRotationInvalid, "this operator held the new key before, and a key rotated out never comes back"
	}
	return newPub, "", ""
}
