package federation

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// NamespaceFederation returns the Federation of a namespace: operators and submissions
// belong to the Federation beside them. A namespace holds one (an admission webhook
// refuses a second); should it hold more (made before that webhook, or without it), the
// oldest, by creationTimestamp and then name, is the namespace's, so a later one can
// neither block the first one's records nor be taken for their Federation.
func NamespaceFederation(ctx context.Context, c client.Reader, namespace string) (*fv1.Federation, error) {
	var feds fv1.FederationList
	if err := c.List(ctx, &feds, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(feds.Items) == 0 {
		return nil, fmt.Errorf("namespace %s has no Federation", namespace)
	}
	oldest := slices.MinFunc(feds.Items, func(a, b fv1.Federation) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return &oldest, nil
}

// FederationLabel marks the objects a Federation's controllers create for it (Secrets,
// CrossAnchors) with the Federation's name.
const FederationLabel = "federation.cairn.dev/federation"
