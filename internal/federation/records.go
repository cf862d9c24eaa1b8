package federation

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// NamespaceFederation returns the Federation of a namespace: operators and submissions
// belong to the one Federation beside them.
func NamespaceFederation(ctx context.Context, c client.Reader, namespace string) (*fv1.Federation, error) {
	var feds fv1.FederationList
	if err := c.List(ctx, &feds, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(feds.Items) != 1 {
		return nil, fmt.Errorf("namespace %s has %d Federations, want 1", namespace, len(feds.Items))
	}
	return &feds.Items[0], nil
}

// FederationLabel marks the objects a Federation's controllers create for it (Secrets,
// CrossAnchors) with the Federation's name.
const FederationLabel = "federation.cairn.dev/federation"
