// Package testcluster starts the real API servers the whole-system tests (test/e2e,
// test/install) run against, and gives them free loopback addresses: the set-up those
// packages share, since one test package cannot import another's test files.
package testcluster

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cairn-dev/cairn/internal/testaddr"
	"github.com/cairn-dev/cairn/manager"
)

// Cluster is a running envtest control plane and its administrator.
type Cluster struct {
	// Config is envtest's own administrator's.
	Config *rest.Config
	// Admin is a client of Config that knows the federation's kinds.
	Admin client.Client
	// Kubeconfig is the path of a kubeconfig for a system:masters user, for processes
	// (cairn manager, kubectl) the test runs.
	Kubeconfig string
}

// Start starts env (with the binaries of $KUBEBUILDER_ASSETS), writes a kubeconfig for
// the system:masters user adminName, and stops env when the test ends.
func Start(t testing.TB, env *envtest.Environment, adminName string) *Cluster {
	t.Helper()
	env.BinaryAssetsDirectory = AssetsDir(t)
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop API server: %v", err)
		}
	})
	user, err := env.AddUser(envtest.User{Name: adminName, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Config: cfg, Admin: admin, Kubeconfig: path}
}

// AssetsDir is $KUBEBUILDER_ASSETS; the test fails without it.
func AssetsDir(t testing.TB) string {
	t.Helper()
	return EnvDir(t, "KUBEBUILDER_ASSETS", "hack/setup-envtest.sh")
}

// EnvDir is the directory the environment variable name holds, which script prints; the
// test fails without it.
func EnvDir(t testing.TB, name, script string) string {
	t.Helper()
	dir := os.Getenv(name)
	if dir == "" {
		t.Fatalf("%s is not set: run `make test`, or export %s=$(%s)", name, name, script)
	}
	return dir
}

// FreeAddresses returns n distinct loopback addresses that nothing listens on now and
// that the kernel does not hand out on its own (see package testaddr).
func FreeAddresses(t testing.TB, n int) []string {
	t.Helper()
	return testaddr.Free(t, n)
}
