package federation

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// NamespaceFederation returns the Federation of a namespace: operators and submissions
// belong to the Federation beside them. Of several, the oldest (by creationTimestamp,
// then name) is the namespace's, so that creating another changes nothing for them; none
// is an error.
func NamespaceFederation(ctx context.Context, c client.Reader, namespace string) (*fv1.Federation, error) {
	var feds fv1.FederationList
	if err := c.List(ctx, &feds, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(feds.Items) == 0 {
		return nil, fmt.Errorf("namespace %s has no Federation", namespace)
	}
	oldest := &feds.Items[0]
	for i := range feds.Items[1:] {
		f := &feds.Items[i+1]
		if f.CreationTimestamp.Before(&oldest.CreationTimestamp) ||
			(f.CreationTimestamp.Equal(&oldest.CreationTimestamp) && f.Name < oldest.Name) {
			oldest = f
		}
	}
	return oldest, nil
}

// FederationLabel marks the objects a Federation's controllers create for it (Secrets,
// CrossAnchors) with the Federation's name.
const FederationLabel = "federation.cairn.dev/federation"
