package e2e

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cairn-dev/cairn/test/testcluster"
)

// startAPIServer runs etcd and kube-apiserver with the federation CRDs installed, as
// `kubectl apply -k config/default` would, for one test and returns a client and an
// administrator's kubeconfig.
func startAPIServer(t *testing.T) (client.Client, string) {
	t.Helper()
	return startAPIServerWith(t, nil)
}

// startAPIServerWith is startAPIServer running apiServer (nil: envtest's default).
func startAPIServerWith(t *testing.T, apiServer *envtest.APIServer) (client.Client, string) {
	t.Helper()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	env.ControlPlane.APIServer = apiServer
	c := testcluster.Start(t, env, "e2e-admin")
	return c.Admin, c.Kubeconfig
}

// get polls url until it answers, and returns the status and body of the first answer.
func get(ctx context.Context, t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode, string(body)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s: %v", url, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestManagerServesProbesMetricsAndLeadsThroughALease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, kubeconfig := startAPIServer(t)
	addrs := freeAddresses(t, 3)
	probes, metrics, api := addrs[0], addrs[1], addrs[2]

	cmd := exec.CommandContext(ctx, cairnBin, "manager",
		"--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", "default",
		"--health-probe-bind-address", probes,
		"--metrics-bind-address", metrics,
		"--federation-bind-address", api)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: "default", Name: "cairn-manager.federation.cairn.dev"}
	for c.Get(ctx, key, lease) != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		select {
		case <-ctx.Done():
			t.Fatalf("manager never took the leader Lease; it logged:\n%s", logs.String())
		case <-time.After(200 * time.Millisecond):
		}
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(ctx, t, http.DefaultClient, "http://"+probes+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}

	// Metrics are HTTPS and need a caller the API server authenticates: an anonymous
	// scrape is refused.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed serving cert
	if code, body := get(ctx, t, insecure, "https://"+metrics+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("anonymous GET /metrics: %d %q, want 401", code, body)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("manager exited with %v after SIGINT; it logged:\n%s", err, logs.String())
	}
	if err := c.Get(ctx, key, lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("manager stopped but still holds the Lease (holder %q)", *h)
	}
}

func TestManagerWithoutClusterFailsClearly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	out, err := exec.Command(cairnBin, "manager", "--kubeconfig", missing).CombinedOutput()
	if err == nil {
		t.Fatalf("manager without a cluster succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "load kubeconfig") || !strings.Contains(string(out), missing) {
		t.Errorf("manager without a cluster printed:\n%s", out)
	}
}
