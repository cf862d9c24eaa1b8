package federation

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// ErrNoAdminSecret means a Federation's admin Secret does not exist (yet): the Federation
// controller generates it on its first reconcile.
var ErrNoAdminSecret = errors.New("the federation's admin Secret does not exist")

// AdminToken returns the admin bearer token of fed, AdminTokenSecretKey in its admin
// Secret (spec.adminTokenSecretRef, or "<federation>-admin"), read from from on each
// call, so that a replaced Secret takes effect at once. It never creates the Secret: a
// missing one is ErrNoAdminSecret. An empty token is returned as empty: no admin
// request can match it.
func AdminToken(ctx context.Context, from client.Reader, fed *fv1.Federation) ([]byte, error) {
	s, err := adminSecret(ctx, from, fed)
	if err != nil {
		return nil, err
	}
	return s.Data[AdminTokenSecretKey], nil
}

// adminSecret reads fed's admin Secret from from; ErrNoAdminSecret when it does not exist.
func adminSecret(ctx context.Context, from client.Reader, fed *fv1.Federation) (*corev1.Secret, error) {
	var s corev1.Secret
	err := from.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: AdminSecretName(fed)}, &s)
	if apierrors.IsNotFound(err) {
		return nil, ErrNoAdminSecret
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// AdminSecretName is the name of fed's admin Secret, which holds its admin token and
// challenge key: spec.adminTokenSecretRef, or "<federation>-admin".
func AdminSecretName(fed *fv1.Federation) string {
	return SecretName(fed, fed.Spec.AdminTokenSecretRef, "admin")
}

// ChallengeKey returns the MAC key of fed's registration challenges: the 32 bytes whose
// hex is ChallengeKeySecretKey in fed's admin Secret (AdminSecretName), read from from.
// It never creates the Secret (the Federation controller does on its first reconcile): a
// missing one is ErrNoAdminSecret, and a Secret without a 64-hex key is an error.
func ChallengeKey(ctx context.Context, from client.Reader, fed *fv1.Federation) ([]byte, error) {
	s, err := adminSecret(ctx, from, fed)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(string(s.Data[ChallengeKeySecretKey]))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("secret %s, key %s: not 64 hex characters", s.Name, ChallengeKeySecretKey)
	}
	return key, nil
}
