// Package controllers holds one reconciler per federation.cairn.dev kind. Each moves its
// own conditions and leaves the rest to its neighbours: verifying a Submission, choosing
// the next CrossAnchor and finishing its transparency-log leg are separate steps linked
// through status. The rules they apply are internal/federation's, which the HTTP API
// (webhook/) applies too. Others use only Setup, its Options and Hooks.
//
// The RBAC markers below are the manager's permissions; `make manifests` turns them into
// config/rbac/role.yaml.
//
// +kubebuilder:rbac:groups=federation.cairn.dev,resources=federations;federationoperators;submissions;crossanchors,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=federation.cairn.dev,resources=federations/status;federationoperators/status;submissions/status;crossanchors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
package controllers
