package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// StatementMaxAge is how far a withdrawal's at or a key rotation's rotation_at may be from
// the server's clock, in either direction (bounds included).
const StatementMaxAge = 5 * time.Minute

// RegistrationMessage returns the bytes an operator signs to prove it holds pub when
// registering through GitOps: "register <org_name> <fingerprint>", single spaces, orgName
// verbatim (not trimmed or normalised), fingerprint = Fingerprint(pub).
func RegistrationMessage(orgName string, pub ed25519.PublicKey) []byte {
	return []byte("register " + orgName + " " + Fingerprint(pub))
}

// SignRegistration returns key's signature over RegistrationMessage(orgName, key's public
// half), in padded standard base64. If key is not 64 bytes it returns "", which no verifier
// accepts.
func SignRegistration(key ed25519.PrivateKey, orgName string) string {
	if len(key) != ed25519.PrivateKeySize {
		return ""
	}
	return signB64(key, RegistrationMessage(orgName, key.Public().(ed25519.PublicKey)))
}

// VerifyRegistration checks that sigB64 is pub's signature over
// RegistrationMessage(orgName, pub). Errors wrap ErrMalformed (pub not 32 bytes, sigB64 not
// canonical padded base64 of 64 bytes) or ErrSignature. The caller must still check that
// orgName is the organisation the registration is for and that pub is the key it registers.
func VerifyRegistration(pub ed25519.PublicKey, orgName, sigB64 string) error {
	return verifySignature(pub, RegistrationMessage(orgName, pub), sigB64, "registration proof of possession")
}

// ChallengePrefix starts every server-issued challenge nonce. No other form an operator
// key signs starts with it (see docs/PROTOCOL.md, "Signed forms"), so a signature over a
// challenge is never a withdrawal, a rotation, a registration proof or a body-nonce token.
const ChallengePrefix = "cairn-challenge:"

// Limits on a challenge's body, the part after ChallengePrefix.
const (
	challengeBodyMinLen = 16
	challengeBodyMaxLen = 256
)

// rotationLead starts every key-rotation message: the new key's PEM text must begin with it.
const rotationLead = "-----BEGIN PUBLIC KEY-----"

// NewChallenge returns the challenge nonce ChallengePrefix ‖ body, for a server that made
// body (for example random ‖ expiry, MACed). It returns an error wrapping ErrMalformed
// unless body is 16 to 256 characters of [A-Za-z0-9_-].
func NewChallenge(body string) (string, error) {
	if !validChallengeBody(body) {
		return "", fmt.Errorf("%w: challenge body is not 16 to 256 characters of [A-Za-z0-9_-]", ErrMalformed)
	}
	return ChallengePrefix + body, nil
}

// IsChallenge reports whether nonce has the challenge form: ChallengePrefix, then 16 to 256
// characters of [A-Za-z0-9_-]. It checks the form only; the server must still check the
// challenge is one it issued, unexpired and unused.
func IsChallenge(nonce string) bool {
	body, ok := strings.CutPrefix(nonce, ChallengePrefix)
	return ok && validChallengeBody(body)
}

// validChallengeBody reports whether s is 16 to 256 characters of [A-Za-z0-9_-].
func validChallengeBody(s string) bool {
	if len(s) < challengeBodyMinLen || len(s) > challengeBodyMaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// SignChallenge returns key's signature over the UTF-8 bytes of a server-issued challenge
// nonce, in padded standard base64 (registration through the API). It refuses, with an
// error wrapping ErrMalformed, a key that is not 64 bytes and a nonce that is not of the
// challenge form (IsChallenge): whatever a server sends, the client signs nothing that
// another verifier could read as a statement or a body-nonce token.
func SignChallenge(key ed25519.PrivateKey, nonce string) (string, error) {
	if len(key) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	if !IsChallenge(nonce) {
		return "", fmt.Errorf("%w: refusing to sign a challenge that is not %q and 16 to 256 characters of [A-Za-z0-9_-]", ErrMalformed, ChallengePrefix)
	}
	return signB64(key, []byte(nonce)), nil
}

// VerifyChallenge checks that nonce has the challenge form (IsChallenge) and that sigB64 is
// pub's signature over its UTF-8 bytes. Errors wrap ErrMalformed (nonce not a challenge,
// pub not 32 bytes, sigB64 not canonical padded base64 of 64 bytes) or ErrSignature. The
// caller must still check that nonce is one it issued, unexpired and not used before.
func VerifyChallenge(pub ed25519.PublicKey, nonce, sigB64 string) error {
	if !IsChallenge(nonce) {
		return fmt.Errorf("%w: challenge nonce is not %q and 16 to 256 characters of [A-Za-z0-9_-]", ErrMalformed, ChallengePrefix)
	}
	return verifySignature(pub, []byte(nonce), sigB64, "challenge signature")
}

// Withdrawal is the body by which an operator withdraws from the federation. Signature is
// the operator's signature over WithdrawalMessage(OperatorID, At), padded standard base64.
type Withdrawal struct {
	OperatorID string `json:"operator_id"`
	// At is an RFC 3339 time; the signature covers it exactly as sent.
	At        string `json:"at"`
	Signature string `json:"signature"`
}

// WithdrawalMessage returns the bytes a withdrawal's signature covers:
// "withdraw <operator_id> at <at>", with at exactly as sent.
func WithdrawalMessage(operatorID, at string) []byte {
	return []byte("withdraw " + operatorID + " at " + at)
}

// NewWithdrawal returns a withdrawal signed by key, dated at (RFC 3339, UTC, whole seconds).
// If key is not 64 bytes the Signature is "" and the withdrawal never verifies.
func NewWithdrawal(key ed25519.PrivateKey, at time.Time) Withdrawal {
	w := Withdrawal{At: at.UTC().Format(time.RFC3339)}
	if len(key) != ed25519.PrivateKeySize {
		return w
	}
	w.OperatorID = OperatorID(key.Public().(ed25519.PublicKey))
	w.Signature = signB64(key, WithdrawalMessage(w.OperatorID, w.At))
	return w
}

// Verify checks, in order: pub is 32 bytes (else ErrMalformed); w.OperatorID is
// OperatorID(pub) (else ErrKeyNotTrusted); w.At parses as RFC 3339 (else ErrMalformed); it
// is within StatementMaxAge of now in either direction, bounds included (else ErrExpired);
// w.Signature is canonical base64 (else ErrMalformed) of pub's signature over
// WithdrawalMessage(w.OperatorID, w.At) (else ErrSignature).
//
// The caller must still look up pub as the key registered for w.OperatorID and reject a
// withdrawal it has already applied. Nothing compared here is secret.
func (w Withdrawal) Verify(pub ed25519.PublicKey, now time.Time) error {
	if err := checkOperatorKey(pub, w.OperatorID, "withdrawal"); err != nil {
		return err
	}
	return w.VerifyAs(w.OperatorID, pub, now)
}

// VerifyAs is Verify for an operator that rotated its key since it registered: it keeps
// operatorID, the ID of its first key, which w must name (else ErrKeyNotTrusted), while
// pub is its current key.
func (w Withdrawal) VerifyAs(operatorID string, pub ed25519.PublicKey, now time.Time) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	if w.OperatorID != operatorID {
		return fmt.Errorf("%w: withdrawal names operator %s, not %q", ErrKeyNotTrusted, Quote(w.OperatorID), operatorID)
	}
	if err := checkStatementTime(w.At, "withdrawal at", now); err != nil {
		return err
	}
	return verifySignature(pub, WithdrawalMessage(w.OperatorID, w.At), w.Signature, "withdrawal signature")
}

// KeyRotation is the body of POST /federation/rotate-key. Both signatures are padded
// standard base64 over RotationMessage(NewPublicKey, RotationAt): OldKeySignature by the
// operator's current key, NewKeySignature by the new key (proof of possession, required).
type KeyRotation struct {
	OperatorID string `json:"operator_id"`
	// NewPublicKey is the new key's PEM "PUBLIC KEY" text; the signatures cover it exactly
	// as sent.
	NewPublicKey string `json:"new_public_key"`
	// RotationAt is an RFC 3339 time; the signatures cover it exactly as sent.
	RotationAt      string `json:"rotation_at"`
	OldKeySignature string `json:"old_key_signature"`
	NewKeySignature string `json:"new_key_signature"`
}

// RotationMessage returns the bytes both key-rotation signatures cover: the new key's PEM
// text exactly as sent, immediately followed by rotation_at, no separator. Verify requires
// the PEM text to start with "-----BEGIN PUBLIC KEY-----", the rotation's leading form.
func RotationMessage(newPublicKeyPEM, rotationAt string) []byte {
	return []byte(newPublicKeyPEM + rotationAt)
}

// NewKeyRotation returns a rotation from oldKey to newKey dated at (RFC 3339, UTC, whole
// seconds), signed by both. Errors wrap ErrMalformed if a key is not 64 bytes or the two
// keys are the same.
func NewKeyRotation(oldKey, newKey ed25519.PrivateKey, at time.Time) (KeyRotation, error) {
	if len(oldKey) != ed25519.PrivateKeySize || len(newKey) != ed25519.PrivateKeySize {
		return KeyRotation{}, fmt.Errorf("%w: Ed25519 private keys must be %d bytes", ErrMalformed, ed25519.PrivateKeySize)
	}
	oldPub := oldKey.Public().(ed25519.PublicKey)
	newPub := newKey.Public().(ed25519.PublicKey)
	if bytes.Equal(oldPub, newPub) {
		return KeyRotation{}, fmt.Errorf("%w: new key is the current key", ErrMalformed)
	}
	pemText, err := MarshalPublicKeyPEM(newPub)
	if err != nil {
		return KeyRotation{}, err
	}
	r := KeyRotation{
		OperatorID:   OperatorID(oldPub),
		NewPublicKey: string(pemText),
		RotationAt:   at.UTC().Format(time.RFC3339),
	}
	msg := RotationMessage(r.NewPublicKey, r.RotationAt)
	r.OldKeySignature = signB64(oldKey, msg)
	r.NewKeySignature = signB64(newKey, msg)
	return r, nil
}

// Verify checks, in order: currentPub is 32 bytes (else ErrMalformed); r.OperatorID is
// OperatorID(currentPub) (else ErrKeyNotTrusted); r.NewPublicKey starts with
// "-----BEGIN PUBLIC KEY-----", so the signed bytes have the rotation's leading form, and
// parses as one Ed25519 PEM "PUBLIC KEY" block (else ErrMalformed) and is not currentPub (else ErrMalformed);
// r.RotationAt parses as RFC 3339 (else ErrMalformed) and is within StatementMaxAge of now in
// either direction, bounds included (else ErrExpired); both signatures are present and
// canonical base64 (else ErrMalformed); old_key_signature verifies under currentPub, then
// new_key_signature under the new key (else ErrSignature, naming the one that failed).
//
// On success it returns the new key. The caller must still look up currentPub as the key
// registered for r.OperatorID, check the new key is not registered to another operator, and
// reject a rotation it has already applied. Nothing compared here is secret.
func (r KeyRotation) Verify(currentPub ed25519.PublicKey, now time.Time) (ed25519.PublicKey, error) {
	if err := checkOperatorKey(currentPub, r.OperatorID, "key rotation"); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.NewPublicKey, rotationLead) {
		return nil, fmt.Errorf("%w: key rotation new_public_key does not start with %q", ErrMalformed, rotationLead)
	}
	newPub, err := ParsePublicKeyPEM([]byte(r.NewPublicKey))
	if err != nil {
		return nil, fmt.Errorf("key rotation new_public_key: %w", err)
	}
	if bytes.Equal(newPub, currentPub) {
		return nil, fmt.Errorf("%w: key rotation new_public_key is the current key", ErrMalformed)
	}
	if err := checkStatementTime(r.RotationAt, "key rotation rotation_at", now); err != nil {
		return nil, err
	}
	if r.OldKeySignature == "" {
		return nil, fmt.Errorf("%w: key rotation old_key_signature is missing", ErrMalformed)
	}
	if r.NewKeySignature == "" {
		return nil, fmt.Errorf("%w: key rotation new_key_signature is missing", ErrMalformed)
	}
	msg := RotationMessage(r.NewPublicKey, r.RotationAt)
	if err := verifySignature(currentPub, msg, r.OldKeySignature, "key rotation old_key_signature"); err != nil {
		return nil, err
	}
	if err := verifySignature(newPub, msg, r.NewKeySignature, "key rotation new_key_signature"); err != nil {
		return nil, err
	}
	return newPub, nil
}

// checkOperatorKey checks pub is 32 bytes (ErrMalformed) and operatorID is OperatorID(pub)
// (ErrKeyNotTrusted).
func checkOperatorKey(pub ed25519.PublicKey, operatorID, what string) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	if want := OperatorID(pub); operatorID != want {
		return fmt.Errorf("%w: %s names operator %s, key is %s", ErrKeyNotTrusted, what, Quote(operatorID), want)
	}
	return nil
}

// checkStatementTime parses at as RFC 3339 (ErrMalformed) and checks it is within
// StatementMaxAge of now, bounds included (ErrExpired).
func checkStatementTime(at, what string, now time.Time) error {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return fmt.Errorf("%w: %s is not an RFC 3339 time", ErrMalformed, what)
	}
	if now.Sub(t) > StatementMaxAge || t.Sub(now) > StatementMaxAge {
		return fmt.Errorf("%w: %s %s is more than %s from now (%s)",
			ErrExpired, what, at, StatementMaxAge, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// signB64 signs msg with key (which must be 64 bytes) and returns padded standard base64.
func signB64(key ed25519.PrivateKey, msg []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}
