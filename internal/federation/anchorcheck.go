package federation

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file checks a CrossAnchor check by check, for a live verification that reports
// each (GET /federation/verify/{id}): the same rules TrustAnchor applies in one verdict,
// and the rule that binds a participant to the Submission the anchor covers.

// AnchorChecks is what checking one CrossAnchor found, each check on its own.
type AnchorChecks struct {
	// HashRecomputed: the anchor's ID is its name, every participant has a lastSeq, and
	// its crossAnchorHash recomputes from its participants and anchoredAt.
	HashRecomputed bool
	// SignatureVerified: its federationSignature verifies under its own key snapshot,
	// federationPublicKeyPEM.
	SignatureVerified bool
	// KeyInHistory: that key is in the Federation's key history.
	KeyInHistory bool
	// Reasons say why each failed check failed, in the order above. None states a value
	// that would have passed.
	Reasons []string
}

// Trusted reports whether every check passed: exactly when TrustAnchor passes ca.
func (c AnchorChecks) Trusted() bool {
	return c.HashRecomputed && c.SignatureVerified && c.KeyInHistory
}

// CheckAnchor runs TrustAnchor's checks on ca one by one, without stopping at the first
// that fails, and without any remembered verdict (VerdictCache.CheckAnchor remembers).
func CheckAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) AnchorChecks {
	return anchorChecks(fed, ca, anchorHashError(ca), anchorSignatureError(ca))
}

// anchorChecks is CheckAnchor's answer given what checking ca's hash and its signature
// found (anchorHashError, anchorSignatureError); the key is looked up in fed's history now.
func anchorChecks(fed *fv1.Federation, ca *fv1.CrossAnchor, hashErr, sigErr error) AnchorChecks {
	var c AnchorChecks
	if err := hashErr; err != nil {
		c.Reasons = append(c.Reasons, "the cross-anchor hash does not recompute from the participants and anchored_at")
	} else {
		c.HashRecomputed = true
	}
	if err := sigErr; err != nil {
		c.Reasons = append(c.Reasons, "the federation signature does not verify under the anchor's own federation key")
	} else {
		c.SignatureVerified = true
	}
	if KeyIndex(fed, ca.Spec.FederationPublicKeyPEM) < 0 {
		c.Reasons = append(c.Reasons, "the anchor's federation key is not in the Federation's key history")
	} else {
		c.KeyInHistory = true
	}
	return c
}

// Errors of VerifyParticipant.
var (
	// ErrNoCoveredSubmission means no Submission of the operator is the one the anchor
	// binds (same lastSeq and chain signature, accepted by the Submission controller).
	ErrNoCoveredSubmission = errors.New("no accepted submission of the operator matches the anchor")
	// ErrParticipantHeader means the covered Submission's signed header does not verify
	// under any key the operator held when it was accepted, or does not match its spec.
	ErrParticipantHeader = errors.New("the submission's signed header does not verify under the key the operator held when it was accepted")
)

// VerifyParticipant checks that sub is the Submission anchor participant p covers and
// that its stored signed header verifies (VerifySubmissionHeader) under a key fo held
// when the Submission controller accepted it: a key of fo's status.keyHistory valid at
// AcceptedAt(sub), bounds included at the second (a key rotated in that second is tried
// with its successor). The key the Submission names (spec.publicKeyPEM) is not trusted.
// Errors wrap ErrNoCoveredSubmission or ErrParticipantHeader.
func VerifyParticipant(fo *fv1.FederationOperator, sub *fv1.Submission, p fv1.Participant) error {
	return verifyParticipant(fo, sub, p, headerVerifies)
}

// verifyParticipant is VerifyParticipant, asking verifies whether sub's signed header
// verifies under a key (VerdictCache remembers the answers).
func verifyParticipant(fo *fv1.FederationOperator, sub *fv1.Submission, p fv1.Participant,
	verifies func(*fv1.Submission, fv1.PublicKeyPEM) bool,
) error {
	if !Registered(fo) || fo.Status.OperatorID != p.OperatorID || sub.Spec.OperatorID != p.OperatorID ||
		sub.Spec.LastSeq != p.LastSeq || sub.Spec.ChainSignature != p.ChainSignature {
		return fmt.Errorf("operator %s: %w", p.OperatorID, ErrNoCoveredSubmission)
	}
	at, ok := AcceptedAt(sub)
	if !ok {
		return fmt.Errorf("operator %s, submission %s: %w", p.OperatorID, sub.Name, ErrNoCoveredSubmission)
	}
	for _, k := range keyRecordsHeldAt(fo, at) {
		if verifies(sub, k.PublicKeyPEM) {
			return nil
		}
	}
	return fmt.Errorf("operator %s, submission %s: %w", p.OperatorID, sub.Name, ErrParticipantHeader)
}

// headerVerifies reports whether sub's signed header verifies under keyPEM and matches its
// spec (VerifySubmissionHeader); false for a key that does not parse.
func headerVerifies(sub *fv1.Submission, keyPEM fv1.PublicKeyPEM) bool {
	pub, err := protocol.ParsePublicKeyPEM([]byte(keyPEM))
	if err != nil {
		return false
	}
	reason, _, _ := VerifySubmissionHeader(&sub.Spec, pub)
	return reason == ""
}

// AcceptedAt is when the Submission controller verified sub's signature under its
// operator's then current key: the transition time of its SignatureVerified condition,
// when True and sub's continuity is verified too. ok is false for a submission not
// accepted.
func AcceptedAt(sub *fv1.Submission) (at time.Time, ok bool) {
	c := meta.FindStatusCondition(sub.Status.Conditions, string(fv1.ConditionSignatureVerified))
	if c == nil || c.Status != "True" || !sub.Status.Ed25519Verified || !sub.Status.ContinuityVerified {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// KeysHeldAt returns the keys of fo's key history valid at t (validFrom <= t <=
// validUntil, compared in whole seconds as the API server stores them), oldest first.
func KeysHeldAt(fo *fv1.FederationOperator, t time.Time) []ed25519.PublicKey {
	var keys []ed25519.PublicKey
	for _, k := range keyRecordsHeldAt(fo, t) {
		if pub, err := protocol.ParsePublicKeyPEM([]byte(k.PublicKeyPEM)); err == nil {
			keys = append(keys, pub)
		}
	}
	return keys
}

// keyRecordsHeldAt returns the records of fo's key history valid at t, as KeysHeldAt
// reads them, oldest first.
func keyRecordsHeldAt(fo *fv1.FederationOperator, t time.Time) []fv1.KeyRecord {
	t = t.Truncate(time.Second)
	var held []fv1.KeyRecord
	for _, k := range fo.Status.KeyHistory {
		if t.Before(k.ValidFrom.Truncate(time.Second)) || k.ValidUntil != nil && t.After(k.ValidUntil.Truncate(time.Second)) {
			continue
		}
		held = append(held, k)
	}
	return held
}
