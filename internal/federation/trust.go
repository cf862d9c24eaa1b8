package federation

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file decides whether the federation made a CrossAnchor. Anyone who can create a
// CrossAnchor (the admission policy in config/admission allows only the manager, but a
// cluster may lack it) can write any spec, so nothing is uploaded, adopted as the last
// anchor, counted for naming or key rotation, re-signed, marked from or turned into a
// receipt unless it passes Trust.Verify. The anchor's status is never consulted: it is
// the controllers' memory, not evidence. The keys come from the Federation's key history,
// which only the manager writes (the admission policy refuses status writes by others).

// ErrUntrusted means a CrossAnchor is not a record the federation made.
var ErrUntrusted = errors.New("not a cross-anchor the federation made")

// anchorVerdict is what verifying one CrossAnchor's spec found: the key whose signature
// verified, or why it did not.
type anchorVerdict struct {
	keyPEM fv1.PublicKeyPEM
	err    error
}

// Trust verifies CrossAnchors and remembers the verdicts. A spec is immutable (and
// a change would bump its generation), so a verdict holds for a UID and generation; the
// key it names is checked against the Federation's key history on every use, since that
// history can grow. The zero value verifies without remembering; a nil *Trust too.
type Trust struct {
	mu       sync.Mutex
	verdicts map[anchorVersion]anchorVerdict
}

type anchorVersion struct {
	uid        types.UID
	generation int64
}

// Verify returns nil when ca is fed's: its anchorID is its name, its participants
// are in strictly ascending operator ID order with a positive lastSeq each, its hash
// recomputes from them and anchoredAt, and its federationSignature verifies over the
// receipt payload under federationPublicKeyPEM, a key of fed's key history. Otherwise the
// error wraps ErrUntrusted and says which check failed (never the value that would have
// passed).
func (t *Trust) Verify(fed *fv1.Federation, ca *fv1.CrossAnchor) error {
	v := t.verdict(ca)
	if v.err != nil {
		return v.err
	}
	if KeyIndex(fed, v.keyPEM) < 0 {
		return fmt.Errorf("%w: CrossAnchor %s is signed by a key that is not in Federation %s's key history", ErrUntrusted, ca.Name, fed.Name)
	}
	return nil
}

// TrustAnchor returns nil when ca is an anchor fed made, by the rule every controller
// applies (see Trust.Verify): its hash recomputes and its signature verifies under a key of
// fed's key history. Otherwise the error wraps no value that would have passed.
func TrustAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) error {
	return (*Trust)(nil).Verify(fed, ca)
}

// Known reports whether a verdict on the anchor with uid at generation is remembered,
// and if so whether Trust.Verify would pass it: a verdict from its metadata alone.
func (t *Trust) Known(fed *fv1.Federation, uid types.UID, generation int64) (trusted, ok bool) {
	if t == nil {
		return false, false
	}
	t.mu.Lock()
	v, ok := t.verdicts[anchorVersion{uid, generation}]
	t.mu.Unlock()
	return ok && v.err == nil && KeyIndex(fed, v.keyPEM) >= 0, ok
}

// verdict verifies ca's spec, or returns the verdict remembered for it.
func (t *Trust) verdict(ca *fv1.CrossAnchor) anchorVerdict {
	version := anchorVersion{ca.UID, ca.Generation}
	if t != nil && ca.UID != "" {
		t.mu.Lock()
		v, ok := t.verdicts[version]
		t.mu.Unlock()
		if ok {
			return v
		}
	}
	v := anchorVerdict{keyPEM: ca.Spec.FederationPublicKeyPEM, err: verifyAnchorSpec(ca)}
	if t != nil && ca.UID != "" {
		t.mu.Lock()
		if t.verdicts == nil {
			t.verdicts = map[anchorVersion]anchorVerdict{}
		}
		t.verdicts[version] = v
		t.mu.Unlock()
	}
	return v
}

// Remember records that ca, which this process signed and created, is trusted.
func (t *Trust) Remember(ca *fv1.CrossAnchor) {
	if t == nil || ca.UID == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.verdicts == nil {
		t.verdicts = map[anchorVersion]anchorVerdict{}
	}
	t.verdicts[anchorVersion{ca.UID, ca.Generation}] = anchorVerdict{keyPEM: ca.Spec.FederationPublicKeyPEM}
}

// verifyAnchorSpec checks everything about ca's spec but whose key signed it: its hash
// (anchorHashError), then its signature (anchorSignatureError).
func verifyAnchorSpec(ca *fv1.CrossAnchor) error {
	if err := anchorHashError(ca); err != nil {
		return err
	}
	return anchorSignatureError(ca)
}

// anchorHashError returns nil when ca's anchorID is its name, every participant has a
// positive lastSeq, and its crossAnchorHash recomputes from its participants (in strictly
// ascending operator ID order, of the shapes protocol.CrossAnchorHash requires) and
// anchoredAt. The error wraps ErrUntrusted and states no recomputed value.
func anchorHashError(ca *fv1.CrossAnchor) error {
	if string(ca.Spec.AnchorID) != ca.Name {
		return fmt.Errorf("%w: CrossAnchor %s names anchor %s", ErrUntrusted, ca.Name, ca.Spec.AnchorID)
	}
	if ca.Spec.AnchorForm != "" || ca.Spec.Tree != nil {
		return merkleHashError(ca)
	}
	for _, p := range ca.Spec.Participants {
		if p.LastSeq < 1 {
			return fmt.Errorf("%w: CrossAnchor %s gives operator %s no lastSeq", ErrUntrusted, ca.Name, p.OperatorID)
		}
	}
	r := AnchorReceipt(ca)
	want, err := protocol.CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt)
	if err != nil {
		return fmt.Errorf("%w: CrossAnchor %s: participating_operators or anchored_at: %w", ErrUntrusted, ca.Name, err)
	}
	if want != r.CrossAnchorHash {
		return fmt.Errorf("%w: CrossAnchor %s: cross_anchor_hash mismatch: its crossAnchorHash does not recompute from its participants and anchoredAt", ErrUntrusted, ca.Name)
	}
	return nil
}

// anchorSignatureError returns nil when ca's federationSignature (canonical padded base64
// of 64 bytes) verifies under its federationPublicKeyPEM over the receipt payload of
// AnchorReceipt(ca), or of its legacy form. Whose key that is, and whether the hash
// recomputes, are not checked here.
func anchorSignatureError(ca *fv1.CrossAnchor) error {
	pub, err := protocol.ParsePublicKeyPEM([]byte(ca.Spec.FederationPublicKeyPEM))
	if err != nil {
		return fmt.Errorf("%w: CrossAnchor %s: federationPublicKeyPEM: %w", ErrUntrusted, ca.Name, err)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(string(ca.Spec.FederationSignature))
	if err != nil || len(sig) != ed25519.SignatureSize ||
		base64.StdEncoding.EncodeToString(sig) != string(ca.Spec.FederationSignature) {
		return fmt.Errorf("%w: CrossAnchor %s: federationSignature is not the padded base64 of 64 bytes", ErrUntrusted, ca.Name)
	}
	r := AnchorReceipt(ca)
	for _, legacy := range [...]bool{false, true} {
		// An anchor signed before receipts named their log's key signs the legacy form.
		r.Legacy = legacy
		raw, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("%w: CrossAnchor %s: %w", ErrUntrusted, ca.Name, err)
		}
		payload, err := protocol.ReceiptPayload(raw)
		if err != nil {
			return fmt.Errorf("%w: CrossAnchor %s: %w", ErrUntrusted, ca.Name, err)
		}
		if ed25519.Verify(pub, payload, sig) {
			return nil
		}
	}
	return fmt.Errorf("%w: CrossAnchor %s: %w: federation_signature over the receipt payload", ErrUntrusted, ca.Name, protocol.ErrSignature)
}

// AnchorReceipt is the receipt ca's federationSignature signs: the anchor's record
// before any log entry, in the current format (all log members null). A Merkle-form
// anchor's has no leaf and proof: they are not part of the signed payload. Anchors signed
// before that format signed its legacy form (Legacy set), which verifyAnchorSpec also
// accepts.
func AnchorReceipt(ca *fv1.CrossAnchor) protocol.Receipt {
	r := protocol.Receipt{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt, CrossAnchorHash: string(ca.Spec.CrossAnchorHash),
		FederationPublicKeyPEM: string(ca.Spec.FederationPublicKeyPEM), FederationSignature: string(ca.Spec.FederationSignature)}
	if IsMerkle(ca) {
		r.AnchorForm = protocol.MerkleForm // each participant's receipt adds its leaf and proof, which the signature leaves out
		return r
	}
	r.ParticipatingOperators = make([]protocol.Participant, len(ca.Spec.Participants))
	for i, p := range ca.Spec.Participants {
		r.ParticipatingOperators[i] = protocol.Participant{OperatorID: string(p.OperatorID), ChainSignature: string(p.ChainSignature)}
	}
	return r
}

// KeyIndex returns the position of the key pemText in fed's key history, or -1.
func KeyIndex(fed *fv1.Federation, pemText fv1.PublicKeyPEM) int {
	for i, k := range fed.Status.KeyHistory {
		if k.PublicKeyPEM == pemText {
			return i
		}
	}
	return -1
}
