package dev

import (
	"context"

	"k8s.io/client-go/rest"
)

// devFederation creates the default Federation unless --create-federation=false, and
// reports whether it did. Without it the manager runs with no Federation until one is
// applied: a restore applies the Secrets and the log first and the Federation last, so
// that the controllers find its keys instead of generating new ones.
func (o *devOptions) devFederation(ctx context.Context, cfg *rest.Config, say func(string, ...any)) (bool, error) {
	if !o.createFederation {
		say("federation     not created (--create-federation=false): apply %s/%s with kubectl", devFederation.Namespace, devFederation.Name)
		return false, nil
	}
	return ensureDevFederation(ctx, cfg, o.federationURL())
}
