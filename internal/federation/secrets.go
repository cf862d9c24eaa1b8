package federation

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The keys of the Secrets a Federation uses. The Secrets are generated when absent and
// never overwritten, and carry no owner reference: deleting a Federation must not delete
// the key its receipts were signed with.
const (
	// SigningKeySecretKey holds the federation's Ed25519 private key, PKCS #8 PEM.
	SigningKeySecretKey = "private.pem"
	// AdminTokenSecretKey holds the admin bearer token, 64 hex characters.
	AdminTokenSecretKey = "token"
	// ChallengeKeySecretKey holds the MAC key of registration challenges, 64 hex characters.
	ChallengeKeySecretKey = "challenge-key"
	// LogKeySecretKey holds the embedded log's signed-note private key.
	LogKeySecretKey = "log.key"
)

// SecretName returns ref's name, or the default "<federation>-<suffix>".
func SecretName(fed *fv1.Federation, ref *fv1.SecretReference, suffix string) string {
	if ref != nil {
		return ref.Name
	}
	return fed.Name + "-" + suffix
}

// ErrSigningKeyMissing means the Secret of the key a Federation signs with was deleted.
// The controllers never generate a key in its place: the federation would go on under a
// key outside its key history, and anchoring would stop with no reason given. Restore the
// Secret, or rotate to another one (spec.signingKeySecretRef).
var ErrSigningKeyMissing = errors.New("the signing key's Secret does not exist")

// SecretSigningKey parses the Ed25519 key of a signing-key Secret.
func SecretSigningKey(s *corev1.Secret) (ed25519.PrivateKey, error) {
	key, err := protocol.ParsePrivateKeyPEM(s.Data[SigningKeySecretKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s, key %s: %w", s.Name, SigningKeySecretKey, err)
	}
	return key, nil
}

// ErrNoLogKey means the Secret of a Federation's embedded log key does not exist: before
// the Federation controller's first reconcile generates it, or, when the log's directory
// already holds a log, because the Secret was not restored with it. The controller never
// generates a key for a log that exists: restore the Secret.
var ErrNoLogKey = errors.New("the embedded log's key Secret does not exist")

// LogPublicKeyPEM returns the PEM of the key fed's transparency log signs checkpoints
// with: the embedded log's, from its key Secret, or the Rekor key spec pins; "" for a
// Rekor log whose key is not pinned. It never creates the Secret (the Federation
// controller does): a missing one is ErrNoLogKey.
func LogPublicKeyPEM(ctx context.Context, c client.Reader, fed *fv1.Federation) (string, error) {
	if fed.Spec.TransparencyLog.IsRemote() {
		return fed.Spec.TransparencyLog.PublicKeyPEM, nil
	}
	skey, err := logPrivateKey(ctx, c, fed)
	if err != nil {
		return "", err
	}
	pemText, err := tlog.LogKeyPEM(skey)
	return string(pemText), err
}

// LogVerifierKey returns the signed-note verifier key of fed's embedded log, the line a
// witness names the log by; "" for a Rekor log.
func LogVerifierKey(ctx context.Context, c client.Reader, fed *fv1.Federation) (string, error) {
	if fed.Spec.TransparencyLog.IsRemote() {
		return "", nil
	}
	skey, err := logPrivateKey(ctx, c, fed)
	if err != nil {
		return "", err
	}
	return tlog.LogVerifierKey(skey)
}

// logPrivateKey reads the embedded log's key from its Secret.
func logPrivateKey(ctx context.Context, c client.Reader, fed *fv1.Federation) (string, error) {
	var s corev1.Secret
	name := LogKeySecretName(fed)
	err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("%w: Secret %s", ErrNoLogKey, name)
	}
	if err != nil {
		return "", err
	}
	return string(s.Data[LogKeySecretKey]), nil
}

// LogKeySecretName is the name of fed's embedded log key Secret.
func LogKeySecretName(fed *fv1.Federation) string {
	return SecretName(fed, fed.Spec.TransparencyLog.SigningKeySecretRef, "log-key")
}
