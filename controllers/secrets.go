package controllers

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
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

// secretName returns ref's name, or the default "<federation>-<suffix>".
func secretName(fed *fv1.Federation, ref *fv1.SecretReference, suffix string) string {
	if ref != nil {
		return ref.Name
	}
	return fed.Name + "-" + suffix
}

// ensureSecret returns the Secret name in fed's namespace, creating it from generate when
// it does not exist. created reports whether it was generated now.
func ensureSecret(ctx context.Context, c client.Client, fed *fv1.Federation, name string, generate func() (map[string][]byte, error)) (s *corev1.Secret, created bool, err error) {
	s = &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, s)
	if err == nil || !apierrors.IsNotFound(err) {
		return s, false, err
	}
	data, err := generate()
	if err != nil {
		return nil, false, err
	}
	s = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: name,
			Labels: map[string]string{federationLabel: fed.Name}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if err := c.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) { // another reconcile made it: use that one
			return ensureSecret(ctx, c, fed, name, generate)
		}
		return nil, false, err
	}
	return s, true, nil
}

// ErrSigningKeyMissing means the Secret of the key a Federation signs with was deleted.
// The controllers never generate a key in its place: the federation would go on under a
// key outside its key history, and anchoring would stop with no reason given. Restore the
// Secret, or rotate to another one (spec.signingKeySecretRef).
var ErrSigningKeyMissing = errors.New("the signing key's Secret does not exist")

// federationKey returns the key fed signs with now: the one in status.signingKeySecret,
// or, before the first, the one spec names, generating its Secret when absent. Once
// status names a Secret, a missing one is ErrSigningKeyMissing.
func federationKey(ctx context.Context, c client.Client, fed *fv1.Federation) (ed25519.PrivateKey, bool, error) {
	name := fed.Status.SigningKeySecret
	if name == "" {
		return signingKey(ctx, c, fed, secretName(fed, fed.Spec.SigningKeySecretRef, "signing-key"))
	}
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("%w: Secret %s/%s held the key of fingerprint %s", ErrSigningKeyMissing, fed.Namespace, name, fed.Status.PublicKeyFingerprint)
	}
	if err != nil {
		return nil, false, err
	}
	key, err := secretSigningKey(&s)
	return key, false, err
}

// signingKey returns the key in Secret name, generating the Secret when absent.
func signingKey(ctx context.Context, c client.Client, fed *fv1.Federation, name string) (ed25519.PrivateKey, bool, error) {
	s, created, err := ensureSecret(ctx, c, fed, name, func() (map[string][]byte, error) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		text, err := protocol.MarshalPrivateKeyPEM(key)
		return map[string][]byte{SigningKeySecretKey: text}, err
	})
	if err != nil {
		return nil, false, err
	}
	key, err := secretSigningKey(s)
	return key, created, err
}

// secretSigningKey parses the Ed25519 key of a signing-key Secret.
func secretSigningKey(s *corev1.Secret) (ed25519.PrivateKey, error) {
	key, err := protocol.ParsePrivateKeyPEM(s.Data[SigningKeySecretKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s, key %s: %w", s.Name, SigningKeySecretKey, err)
	}
	return key, nil
}

// ensureAdminSecret makes sure fed's admin token and challenge key exist.
func ensureAdminSecret(ctx context.Context, c client.Client, fed *fv1.Federation) error {
	_, err := adminSecret(ctx, c, fed)
	return err
}

// ChallengeKey returns the MAC key of fed's registration challenges: the 32 bytes whose
// hex is ChallengeKeySecretKey in fed's admin Secret (spec.adminTokenSecretRef, or
// "<federation>-admin"), which it generates when absent, as the Federation controller
// does. A Secret without a 64-hex key is an error.
func ChallengeKey(ctx context.Context, c client.Client, fed *fv1.Federation) ([]byte, error) {
	s, err := adminSecret(ctx, c, fed)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(string(s.Data[ChallengeKeySecretKey]))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("secret %s, key %s: not 64 hex characters", s.Name, ChallengeKeySecretKey)
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
	if fed.Spec.TransparencyLog.Type == fv1.TransparencyLogRekor {
		return fed.Spec.TransparencyLog.PublicKeyPEM, nil
	}
	var s corev1.Secret
	name := logKeySecretName(fed)
	err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("%w: Secret %s", ErrNoLogKey, name)
	}
	if err != nil {
		return "", err
	}
	pemText, err := tlog.LogKeyPEM(string(s.Data[LogKeySecretKey]))
	return string(pemText), err
}

// adminSecret returns fed's admin Secret, generating it when absent.
func adminSecret(ctx context.Context, c client.Client, fed *fv1.Federation) (*corev1.Secret, error) {
	s, _, err := ensureSecret(ctx, c, fed, secretName(fed, fed.Spec.AdminTokenSecretRef, "admin"), func() (map[string][]byte, error) {
		token, key := make([]byte, 32), make([]byte, 32)
		if _, err := rand.Read(token); err != nil {
			return nil, err
		}
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		return map[string][]byte{AdminTokenSecretKey: []byte(hex.EncodeToString(token)), ChallengeKeySecretKey: []byte(hex.EncodeToString(key))}, nil
	})
	return s, err
}

// logKeySecretName is the name of fed's embedded log key Secret.
func logKeySecretName(fed *fv1.Federation) string {
	return secretName(fed, fed.Spec.TransparencyLog.SigningKeySecretRef, "log-key")
}

// logKey returns the checkpoint key of fed's embedded log in dir, generating its Secret
// when absent, but only while dir holds no log: a log restored without its key must not
// be given a new one (ErrNoLogKey). The log's origin names the federation.
func logKey(ctx context.Context, c client.Client, fed *fv1.Federation, dir string) (string, error) {
	name := logKeySecretName(fed)
	s, _, err := ensureSecret(ctx, c, fed, name, func() (map[string][]byte, error) {
		holds, err := tlog.HoldsLog(dir)
		if err != nil {
			return nil, err
		}
		if holds {
			return nil, fmt.Errorf("%w: Secret %s, and %s holds a log: restore the Secret it was written with", ErrNoLogKey, name, dir)
		}
		key, err := tlog.GenerateLogKey("cairn.federation/" + fed.Namespace + "/" + fed.Name)
		return map[string][]byte{LogKeySecretKey: []byte(key)}, err
	})
	if err != nil {
		return "", err
	}
	return string(s.Data[LogKeySecretKey]), nil
}
