package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TokenMaxAge is how far a body nonce's time may be from the server's clock, in either
// direction, for the server to accept the token.
const TokenMaxAge = 5 * time.Minute

// Limits on the shapes ParseToken accepts.
const (
	tokenMaxLen       = 1024 // whole token, including any "Bearer " prefix
	bodyNonceMaxDigit = 16   // decimal digits of 2^53-1, the largest time a body nonce has
)

// Token is a parsed bearer token "<operator_id>.<nonce>.<sig_b64>". A Token from ParseToken
// has the right shape; nothing about it is verified until Verify and, for a body nonce,
// CheckBodyNonce.
type Token struct {
	// OperatorID is "op_" and 16 lowercase hex characters; see OperatorID.
	OperatorID string
	// Nonce is either a body nonce "<unix_seconds>-<hex SHA-256 of the body>" (see
	// BodyNonce) or a server-issued challenge: ChallengePrefix and 16 to 256 characters
	// of [A-Za-z0-9_-] (see IsChallenge).
	Nonce string
	// Signature is the 64-byte Ed25519 signature over the nonce's UTF-8 bytes.
	Signature []byte
}

// BodyNonce returns the client nonce for a request body sent at now:
// "<unix_seconds>-<hex SHA-256 of body>", decimal seconds and 64 lowercase hex characters.
// now must not be before 1970: such a result is not a body nonce (IsBodyNonce is false).
func BodyNonce(now time.Time, body []byte) string {
	return BodyDigestNonce(now, sha256.Sum256(body))
}

// BodyDigestNonce is BodyNonce for a body the caller has hashed itself, such as a file it
// streams: digest is SHA-256 of the body.
func BodyDigestNonce(now time.Time, digest [sha256.Size]byte) string {
	return strconv.FormatInt(now.Unix(), 10) + "-" + hex.EncodeToString(digest[:])
}

// IsBodyNonce reports whether nonce has the body-nonce form: a decimal number of seconds
// (no sign, no leading zero, at most 2^53-1, as every integer Cairn reads), '-', then 64
// lowercase hex characters. It
// checks the form only, not the hash or the time; see Token.CheckBodyNonce.
func IsBodyNonce(nonce string) bool {
	_, _, ok := splitBodyNonce(nonce)
	return ok
}

// splitBodyNonce returns the seconds and the hash hex of a body nonce.
func splitBodyNonce(nonce string) (secs int64, hashHex string, ok bool) {
	digits, hashHex, found := strings.Cut(nonce, "-")
	if !found || len(digits) == 0 || len(digits) > bodyNonceMaxDigit || len(hashHex) != 2*sha256.Size {
		return 0, "", false
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, "", false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, "", false
		}
	}
	if !isHex(hashHex, 2*sha256.Size) {
		return 0, "", false
	}
	secs, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || secs > maxSafeInteger {
		return 0, "", false
	}
	return secs, hashHex, true
}

// SignToken signs nonce with key and returns the token "<operator_id>.<nonce>.<sig_b64>",
// without the "Bearer " prefix; the operator ID is derived from key's public half. It
// returns an error wrapping ErrMalformed if key is not 64 bytes or nonce has neither the
// body-nonce nor the challenge shape. Signing is constant-time in the key (crypto/ed25519).
func SignToken(key ed25519.PrivateKey, nonce string) (string, error) {
	if len(key) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	if !validNonce(nonce) {
		return "", fmt.Errorf("%w: token nonce is neither a body nonce nor a challenge", ErrMalformed)
	}
	t := Token{
		OperatorID: OperatorID(key.Public().(ed25519.PublicKey)),
		Nonce:      nonce,
		Signature:  ed25519.Sign(key, []byte(nonce)),
	}
	return t.String(), nil
}

// ParseToken parses a bearer token, with or without the "Bearer " prefix (scheme matched
// case-insensitively, then exactly one space). It checks shape only: at most 1024
// characters; exactly three '.'-separated parts; the operator ID is "op_" and 16 lowercase
// hex characters; the nonce is a body nonce (IsBodyNonce) or a challenge (IsChallenge); the
// signature is canonical padded standard base64 of exactly 64 bytes.
// Anything else is an error wrapping ErrMalformed.
//
// The caller must still call Verify with the key registered for OperatorID and then either
// CheckBodyNonce (if IsBodyNonce) or check the challenge nonce is one it issued, is
// unexpired and unused.
func ParseToken(s string) (*Token, error) {
	if len(s) > tokenMaxLen {
		return nil, fmt.Errorf("%w: token is %d bytes, limit %d", ErrMalformed, len(s), tokenMaxLen)
	}
	if len(s) >= len("Bearer ") && strings.EqualFold(s[:len("Bearer ")], "Bearer ") {
		s = s[len("Bearer "):]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: token has %d '.'-separated parts, want 3", ErrMalformed, len(parts))
	}
	if !wellFormedOperatorID(parts[0]) {
		return nil, fmt.Errorf("%w: token operator ID is not op_ and 16 lowercase hex", ErrMalformed)
	}
	if !validNonce(parts[1]) {
		return nil, fmt.Errorf("%w: token nonce is neither <unix_seconds>-<64 lowercase hex> nor %q and its body", ErrMalformed, ChallengePrefix)
	}
	sig, err := decodeCanonicalBase64("signature", parts[2], ed25519.SignatureSize)
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	return &Token{OperatorID: parts[0], Nonce: parts[1], Signature: sig}, nil
}

// ParseAuthorization is ParseToken for an HTTP Authorization header: exactly the scheme
// "Bearer", in any case (RFC 9110 §11.1), one space, then the token. A header without
// the scheme, or with other white space after it, is an error wrapping ErrMalformed.
func ParseAuthorization(header string) (*Token, error) {
	const scheme = "Bearer "
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return nil, fmt.Errorf("%w: Authorization is not \"Bearer <token>\"", ErrMalformed)
	}
	return ParseToken(header)
}

// String formats t as "<operator_id>.<nonce>.<sig_b64>", without the "Bearer " prefix. For
// a Token from ParseToken, ParseToken(t.String()) yields an equal Token.
func (t *Token) String() string {
	return t.OperatorID + "." + t.Nonce + "." + base64.StdEncoding.EncodeToString(t.Signature)
}

// Verify checks that t names pub's operator ID and that t.Signature is pub's Ed25519
// signature over the nonce's UTF-8 bytes. It re-checks the shapes ParseToken checks.
//
// Errors wrap ErrMalformed (bad shape, or pub not 32 bytes), ErrKeyNotTrusted (t.OperatorID
// is not OperatorID(pub)) or ErrSignature. Verify does not look at the nonce's meaning: the
// caller must still call CheckBodyNonce or check its own challenge. Nothing compared here is
// secret.
func (t *Token) Verify(pub ed25519.PublicKey) error {
	if err := t.checkShape(pub); err != nil {
		return err
	}
	if want := OperatorID(pub); t.OperatorID != want {
		return fmt.Errorf("%w: token names operator %s, key is %s", ErrKeyNotTrusted, t.OperatorID, want)
	}
	return t.checkSignature(pub)
}

// VerifyAs checks that t.Signature is pub's Ed25519 signature over the nonce, where pub is
// the current key of the operator registered as t.OperatorID, looked up by the caller. It
// does not require t.OperatorID to be derived from pub: an operator keeps the ID of its
// first key when it rotates (§5), so after a rotation its tokens name that ID and are
// signed by the new key. A server verifies with VerifyAs; Verify is for a key whose ID is
// its own. Errors are Verify's, but never ErrKeyNotTrusted.
func (t *Token) VerifyAs(pub ed25519.PublicKey) error {
	if err := t.checkShape(pub); err != nil {
		return err
	}
	return t.checkSignature(pub)
}

// checkShape re-checks what ParseToken checks, and that pub is an Ed25519 key.
func (t *Token) checkShape(pub ed25519.PublicKey) error {
	if t == nil {
		return fmt.Errorf("%w: nil token", ErrMalformed)
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	if !wellFormedOperatorID(t.OperatorID) || !validNonce(t.Nonce) || len(t.Signature) != ed25519.SignatureSize {
		return fmt.Errorf("%w: token fields are not of the token's shape", ErrMalformed)
	}
	return nil
}

// checkSignature verifies t.Signature under pub.
func (t *Token) checkSignature(pub ed25519.PublicKey) error {
	if !ed25519.Verify(pub, []byte(t.Nonce), t.Signature) {
		return fmt.Errorf("%w: token signature for operator %s", ErrSignature, t.OperatorID)
	}
	return nil
}

// CheckBodyNonce checks that t.Nonce is a body nonce (see IsBodyNonce), that its hash is
// SHA-256(body), and that its time is within maxAge of now in either direction (bounds
// included; the nonce has whole seconds, now is used to the nanosecond). Servers pass
// TokenMaxAge.
//
// The hash comparison is constant-time. Errors wrap ErrMalformed (not a body nonce),
// ErrMismatch (a *MismatchError with Field "nonce body hash") or ErrExpired. It does not
// check the signature (call Verify) and does not detect replay within the window: the caller
// must remember the nonces it accepted for maxAge if replays matter.
func (t *Token) CheckBodyNonce(now time.Time, body []byte, maxAge time.Duration) error {
	return t.CheckBodyDigest(now, sha256.Sum256(body), maxAge)
}

// CheckBodyDigest is CheckBodyNonce for a body the caller has hashed itself, such as one
// it streamed: digest is SHA-256 of the body. The time is checked first, then the hash.
func (t *Token) CheckBodyDigest(now time.Time, digest [sha256.Size]byte, maxAge time.Duration) error {
	if err := t.CheckNonceTime(now, maxAge); err != nil {
		return err
	}
	_, stated, _ := splitBodyNonce(t.Nonce)
	computed := hex.EncodeToString(digest[:])
	if subtle.ConstantTimeCompare([]byte(computed), []byte(stated)) != 1 {
		return &MismatchError{Field: "nonce body hash", Want: computed, Got: stated}
	}
	return nil
}

// CheckNonceTime checks that t.Nonce is a body nonce whose time is within maxAge of now in
// either direction (bounds included), without looking at its hash: a server streaming a
// large body calls it before reading the body, then CheckBodyDigest after. Errors wrap
// ErrMalformed (not a body nonce) or ErrExpired.
func (t *Token) CheckNonceTime(now time.Time, maxAge time.Duration) error {
	if t == nil {
		return fmt.Errorf("%w: nil token", ErrMalformed)
	}
	secs, _, ok := splitBodyNonce(t.Nonce)
	if !ok {
		return fmt.Errorf("%w: token nonce is not <unix_seconds>-<64 lowercase hex>", ErrMalformed)
	}
	at := time.Unix(secs, 0)
	if now.Sub(at) > maxAge || at.Sub(now) > maxAge {
		return fmt.Errorf("%w: token nonce time %s is more than %s from now (%s)",
			ErrExpired, at.UTC().Format(time.RFC3339), maxAge, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// validNonce reports whether s is a token nonce: a body nonce (IsBodyNonce, starting with
// a digit) or a challenge (IsChallenge, starting with ChallengePrefix). No other signed
// form starts with either.
func validNonce(s string) bool {
	return IsBodyNonce(s) || IsChallenge(s)
}

// verifySignature checks that sigB64 is pub's Ed25519 signature over msg. what names the
// signature in errors. Errors wrap ErrMalformed (pub not 32 bytes, sigB64 not canonical
// base64 of 64 bytes) or ErrSignature.
func verifySignature(pub ed25519.PublicKey, msg []byte, sigB64, what string) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	sig, err := decodeCanonicalBase64("signature", sigB64, ed25519.SignatureSize)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("%w: %s", ErrSignature, what)
	}
	return nil
}
