// Package install tests config/ the way a platform team uses it, on a real API server
// (envtest): every kustomization a cluster is given must pass a server-side dry run, and
// the manager, run under the RBAC config/default renders and impersonating its
// ServiceAccount, must do everything its controllers and federation API need and be
// refused what they do not. The tests need KUBEBUILDER_ASSETS (hack/setup-envtest.sh)
// and CAIRN_EXTERNAL_CRDS (hack/setup-crds.sh); `make test` sets both.
package install
