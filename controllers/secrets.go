package controllers

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

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
			Labels: map[string]string{federation.FederationLabel: fed.Name}},
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

// federationKey returns the key fed signs with now: the one in status.signingKeySecret,
// or, before the first, the one spec names, generating its Secret when absent. Once
// status names a Secret, a missing one is federation.ErrSigningKeyMissing.
func federationKey(ctx context.Context, c client.Client, fed *fv1.Federation) (ed25519.PrivateKey, bool, error) {
	name := fed.Status.SigningKeySecret
	if name == "" {
		return signingKey(ctx, c, fed, federation.SecretName(fed, fed.Spec.SigningKeySecretRef, "signing-key"))
	}
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("%w: Secret %s/%s held the key of fingerprint %s", federation.ErrSigningKeyMissing, fed.Namespace, name, fed.Status.PublicKeyFingerprint)
	}
	if err != nil {
		return nil, false, err
	}
	key, err := federation.SecretSigningKey(&s)
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
		return map[string][]byte{federation.SigningKeySecretKey: text}, err
	})
	if err != nil {
		return nil, false, err
	}
	key, err := federation.SecretSigningKey(s)
	return key, created, err
}

// ensureAdminSecret makes sure fed's admin token and challenge key exist.
func ensureAdminSecret(ctx context.Context, c client.Client, fed *fv1.Federation) error {
	_, err := adminSecret(ctx, c, fed)
	return err
}

// adminSecret returns fed's admin Secret, generating it when absent.
func adminSecret(ctx context.Context, c client.Client, fed *fv1.Federation) (*corev1.Secret, error) {
	s, _, err := ensureSecret(ctx, c, fed, federation.SecretName(fed, fed.Spec.AdminTokenSecretRef, "admin"), func() (map[string][]byte, error) {
		token, key := make([]byte, 32), make([]byte, 32)
		if _, err := rand.Read(token); err != nil {
			return nil, err
		}
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		return map[string][]byte{federation.AdminTokenSecretKey: []byte(hex.EncodeToString(token)), federation.ChallengeKeySecretKey: []byte(hex.EncodeToString(key))}, nil
	})
	return s, err
}

// logKey returns the checkpoint key of fed's embedded log in dir, generating its Secret
// when absent, but only while dir holds no log: a log restored without its key must not
// be given a new one (federation.ErrNoLogKey). The log's origin names the federation.
func logKey(ctx context.Context, c client.Client, fed *fv1.Federation, dir string) (string, error) {
	name := federation.LogKeySecretName(fed)
	s, _, err := ensureSecret(ctx, c, fed, name, func() (map[string][]byte, error) {
		holds, err := tlog.HoldsLog(dir)
		if err != nil {
			return nil, err
		}
		if holds {
			return nil, fmt.Errorf("%w: Secret %s, and %s holds a log: restore the Secret it was written with", federation.ErrNoLogKey, name, dir)
		}
		key, err := tlog.GenerateLogKey("cairn.federation/" + fed.Namespace + "/" + fed.Name)
		return map[string][]byte{federation.LogKeySecretKey: []byte(key)}, err
	})
	if err != nil {
		return "", err
	}
	return string(s.Data[federation.LogKeySecretKey]), nil
}
