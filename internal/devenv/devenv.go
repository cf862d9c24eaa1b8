// Package devenv runs the local control plane of `cairn dev`: etcd and kube-apiserver from
// the cached envtest binaries, the federation CRDs, the admission policy that lets only the
// manager create CrossAnchors and Submissions, and a kubeconfig for kubectl; and it keeps
// the files of the local chain service that `cairn dev` runs beside them.
//
// State lives in one directory (by default ./.cairn-dev): etcd's data survives restarts,
// so objects applied in one session are there in the next; the kubeconfig is rewritten on
// every start because the API server's port and certificates change. The chain, its HMAC
// secret and the operator key that signs its exports are made once and kept (LoadChain).
package devenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/config/crd"
)

// Options configures the local control plane.
type Options struct {
	// Dir holds etcd's data and the kubeconfig.
	Dir string
	// AssetsDir holds the kube-apiserver, etcd and kubectl binaries.
	AssetsDir string
	// Fresh deletes etcd's data before starting.
	Fresh bool
}

// Env is a running control plane. Stop it when done.
type Env struct {
	// Config reaches the API server as an administrator. The admission policy refuses it,
	// like any user, the creation of CrossAnchors and Submissions and status writes.
	Config *rest.Config
	// ManagerConfig reaches the API server as the manager (admission.ManagerUsername, a
	// cluster administrator with a client certificate), whom the admission policy lets
	// through: what a pod of config/default's ServiceAccount looks like to it.
	ManagerConfig *rest.Config
	// Kubeconfig is the path of the kubeconfig written for kubectl.
	Kubeconfig string
	// CRDs lists the names of the installed CRDs.
	CRDs []string

	env *envtest.Environment
}

// Start launches etcd and kube-apiserver, installs the CRDs and the admission policy (and
// waits until it is enforced, or ctx ends), and writes the kubeconfig, an administrator's.
// On error nothing is left running.
func Start(ctx context.Context, o Options) (*Env, error) {
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(o.AssetsDir, bin)); err != nil {
			return nil, fmt.Errorf("control plane binary %s not found in %q (run hack/setup-envtest.sh and pass its output with --assets): %w", bin, o.AssetsDir, err)
		}
	}
	dataDir := filepath.Join(o.Dir, "etcd")
	if o.Fresh {
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, fmt.Errorf("remove etcd data: %w", err)
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	crds, err := LoadCRDs()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   o.AssetsDir,
		CRDInstallOptions:       envtest.CRDInstallOptions{CRDs: crds},
		ControlPlaneStopTimeout: 20 * time.Second,
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: dataDir}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", errors.Join(err, env.Stop()))
	}
	e := &Env{Config: cfg, env: env, Kubeconfig: filepath.Join(o.Dir, "kubeconfig")}
	for _, c := range crds {
		e.CRDs = append(e.CRDs, c.Name)
	}
	if err := e.secure(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if err := e.writeKubeconfig(); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

// secure installs the admission policy and makes the manager's identity.
func (e *Env) secure(ctx context.Context) error {
	if err := admission.Install(ctx, e.Config); err != nil {
		return err
	}
	manager, err := e.env.AddUser(envtest.User{Name: admission.ManagerUsername, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("create manager user: %w", err)
	}
	e.ManagerConfig = manager.Config()
	// As ctrl.GetConfig does for `cairn manager`: no client-side throttling (client-go's
	// default is 5 requests a second), the API server's priority and fairness decides.
	e.ManagerConfig.QPS = -1
	return nil
}

// URL is the API server's address.
func (e *Env) URL() string { return e.Config.Host }

// EtcdURL is etcd's client address, for its maintenance API (status, defragment).
func (e *Env) EtcdURL() string { return e.env.ControlPlane.Etcd.URL.String() }

// Stop stops the API server and etcd and removes the kubeconfig, which no longer works.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if rmErr := os.Remove(e.Kubeconfig); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

func (e *Env) writeKubeconfig() error {
	admin, err := e.env.AddUser(envtest.User{Name: "cairn-dev-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("create admin user: %w", err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("render kubeconfig: %w", err)
	}
	if err := os.WriteFile(e.Kubeconfig, kc, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// LoadCRDs decodes the CRDs embedded from config/crd/bases.
func LoadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, name := range files {
		raw, err := crd.Bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, fmt.Errorf("decode embedded CRD %s: %w", name, err)
		}
		crds = append(crds, c)
	}
	return crds, nil
}
