package federation

import (
	"context"
	"errors"

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
	var s corev1.Secret
	err := from.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: AdminSecretName(fed)}, &s)
	if apierrors.IsNotFound(err) {
		return nil, ErrNoAdminSecret
	}
	if err != nil {
		return nil, err
	}
	return s.Data[AdminTokenSecretKey], nil
}
