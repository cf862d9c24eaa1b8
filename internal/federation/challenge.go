package federation

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The registration challenge (docs/PROTOCOL.md §4) is stateless: random ‖ expiry, MACed
// with the Federation's challenge key (ChallengeKey), so that any replica checks it, and
// the controller too, when the challenge is an operator's proof (spec.challengeProof).
// Its single use is a used-challenge record: a ConfigMap the API creates, atomically, when
// it takes the challenge, naming the object and the organization it took it for.

// The layout of a challenge body before base64url: random, expiry, MAC.
const (
	challengeRandomLen = 16
	challengeExpiryLen = 8
	challengeMACLen    = sha256.Size
	challengeRawLen    = challengeRandomLen + challengeExpiryLen + challengeMACLen
	// challengeMACDomain starts the MACed bytes, so the challenge key MACs nothing else.
	challengeMACDomain = "cairn-challenge-v1:"
)

// The used-challenge records: ConfigMaps in the Federation's namespace.
const (
	// UsedChallengeLabel marks a used-challenge record; its value is "true".
	UsedChallengeLabel = "federation.cairn.dev/used-challenge"
	// UsedChallengeExpiresAnnotation holds the challenge's expiry, RFC 3339; past it the
	// record may be deleted.
	UsedChallengeExpiresAnnotation = "federation.cairn.dev/expires-at"
	// UsedChallengeOperatorAnnotation names the FederationOperator the challenge was used
	// to create.
	UsedChallengeOperatorAnnotation = "federation.cairn.dev/operator"
	// UsedChallengeOrgAnnotation holds the hex SHA-256 of the org_name sent with it.
	UsedChallengeOrgAnnotation = "federation.cairn.dev/org-name-sha256"
	usedChallengePrefix        = "cairn-challenge-"
)

// ErrChallengeProof marks CheckChallengeUse's refusals of a challenge proof; its other
// errors are failures to read.
var ErrChallengeProof = errors.New("challengeProof")

// ErrChallengeNotIssued means a nonce is not a challenge the federation issued: not of
// the challenge form, or its MAC does not verify under the challenge key.
var ErrChallengeNotIssued = errors.New("the nonce is not a challenge this federation issued")

// MintChallenge returns a challenge that expires at expiry, MACed with key.
func MintChallenge(key []byte, expiry time.Time) (string, error) {
	raw := make([]byte, challengeRawLen)
	if _, err := rand.Read(raw[:challengeRandomLen]); err != nil {
		return "", err
	}
	binary.BigEndian.PutUint64(raw[challengeRandomLen:], uint64(expiry.Unix()))
	copy(raw[challengeRandomLen+challengeExpiryLen:], challengeMAC(key, raw[:challengeRandomLen+challengeExpiryLen]))
	return protocol.NewChallenge(base64.RawURLEncoding.EncodeToString(raw))
}

// challengeMAC is HMAC-SHA256(key, challengeMACDomain ‖ msg).
func challengeMAC(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(challengeMACDomain))
	m.Write(msg)
	return m.Sum(nil)
}

// ChallengeExpiry returns the expiry of nonce when key's MAC over it verifies (compared
// in constant time); ErrChallengeNotIssued otherwise. It checks neither the expiry nor
// that the challenge is unused.
func ChallengeExpiry(key []byte, nonce string) (time.Time, error) {
	if !protocol.IsChallenge(nonce) {
		return time.Time{}, ErrChallengeNotIssued
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(nonce, protocol.ChallengePrefix))
	if err != nil || len(raw) != challengeRawLen {
		return time.Time{}, ErrChallengeNotIssued
	}
	signed := raw[:challengeRandomLen+challengeExpiryLen]
	if !hmac.Equal(raw[len(signed):], challengeMAC(key, signed)) {
		return time.Time{}, ErrChallengeNotIssued
	}
	return time.Unix(int64(binary.BigEndian.Uint64(raw[challengeRandomLen:len(signed)])), 0).UTC(), nil
}

// UsedChallenge is the used-challenge record of nonce, taken at registration for the
// FederationOperator named operator with orgName, kept until expiry; operator "" for a
// challenge used otherwise (as a bearer token's nonce), which registers nothing.
func UsedChallenge(namespace, nonce, operator, orgName string, expiry time.Time) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = namespace, usedChallengeName(nonce)
	cm.Labels = map[string]string{UsedChallengeLabel: "true"}
	cm.Annotations = map[string]string{UsedChallengeExpiresAnnotation: expiry.Format(time.RFC3339)}
	if operator != "" {
		cm.Annotations[UsedChallengeOperatorAnnotation] = operator
		cm.Annotations[UsedChallengeOrgAnnotation] = orgDigest(orgName)
	}
	return cm
}

// IsUsedChallengeName reports whether name is a used-challenge record's name.
func IsUsedChallengeName(name string) bool { return strings.HasPrefix(name, usedChallengePrefix) }

// usedChallengeName is the name of nonce's used-challenge record.
func usedChallengeName(nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return usedChallengePrefix + hex.EncodeToString(sum[:])
}

// orgDigest is the hex SHA-256 of orgName.
func orgDigest(orgName string) string {
	sum := sha256.Sum256([]byte(orgName))
	return hex.EncodeToString(sum[:])
}

// ProvesPossession checks that fo's spec proves possession of pub, its spec key: its
// proofOfPossession over "register <orgName> <fingerprint>" when it has one, else the
// signature of its challengeProof over the challenge. It checks nothing of the
// challenge's issue, age or use (CheckChallengeUse does, once, at registration).
// Its errors do not name the field; ProofField does.
func ProvesPossession(fo *fv1.FederationOperator, pub ed25519.PublicKey) error {
	if ProofField(fo) == "proofOfPossession" {
		return protocol.VerifyRegistration(pub, fo.Spec.OrgName, string(fo.Spec.ProofOfPossession))
	}
	return protocol.VerifyChallenge(pub, fo.Spec.ChallengeProof.Nonce, string(fo.Spec.ChallengeProof.Signature))
}

// ProofField names the spec field that is fo's proof of possession: proofOfPossession
// when set or when there is no challengeProof, else challengeProof.
func ProofField(fo *fv1.FederationOperator) string {
	if fo.Spec.ProofOfPossession != "" || fo.Spec.ChallengeProof == nil {
		return "proofOfPossession"
	}
	return "challengeProof"
}

// CheckChallengeUse checks, for fo registering with a challengeProof (and no
// proofOfPossession), that fed issued the challenge (its MAC verifies under fed's
// challenge key, read from keys), that fo was created before it expired, and that the
// API took it for fo and its orgName (the used-challenge record, read from records): a
// challenge signature captured from one registration registers nothing else. Any
// other fo passes.
func CheckChallengeUse(ctx context.Context, keys, records client.Reader, fed *fv1.Federation, fo *fv1.FederationOperator) error {
	cp := fo.Spec.ChallengeProof
	if fo.Spec.ProofOfPossession != "" || cp == nil {
		return nil
	}
	if fed == nil {
		return fmt.Errorf("%w: no Federation in the namespace issues challenges", ErrChallengeProof)
	}
	key, err := ChallengeKey(ctx, keys, fed)
	if err != nil {
		return fmt.Errorf("the federation's challenge key: %w", err)
	}
	expiry, err := ChallengeExpiry(key, cp.Nonce)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrChallengeProof, err)
	}
	if !fo.CreationTimestamp.Time.Before(expiry) {
		return fmt.Errorf("%w: the challenge expired at %s, before the operator was created", ErrChallengeProof, expiry.Format(time.RFC3339))
	}
	var cm corev1.ConfigMap
	err = records.Get(ctx, client.ObjectKey{Namespace: fo.Namespace, Name: usedChallengeName(cp.Nonce)}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: the federation's API did not take this challenge: a challenge proof comes only from POST /federation/register", ErrChallengeProof)
	case err != nil:
		return err
	case cm.Annotations[UsedChallengeOperatorAnnotation] != fo.Name ||
		!hmac.Equal([]byte(cm.Annotations[UsedChallengeOrgAnnotation]), []byte(orgDigest(fo.Spec.OrgName))):
		return fmt.Errorf("%w: the API took this challenge for another registration", ErrChallengeProof)
	}
	return nil
}
