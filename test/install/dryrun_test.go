package install

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cairn-dev/cairn/test/testcluster"
)

// TestKustomizationsDryRunOnTheServer applies, with `kubectl apply --dry-run=server -k`,
// every kustomization a cluster is given: the API server decodes, defaults, validates and
// admits each object (schema, Pod Security, the kinds it knows) but stores nothing.
// config/overlays/provided-certificate runs first, on a server that has never heard of
// cert-manager; config/default and config/overlays/ingress once cert-manager's CRDs are
// installed; config/overlays/prometheus is refused until the Prometheus operator's
// ServiceMonitor CRD is installed, then accepted.
func TestKustomizationsDryRunOnTheServer(t *testing.T) {
	crds := externalCRDs(t)
	c := startCluster(t, &envtest.Environment{})
	tree := filepath.Join(t.TempDir(), "config")
	if err := os.CopyFS(tree, os.DirFS(configDir)); err != nil {
		t.Fatal(err)
	}
	caPEM := newCACertificate(t)
	if err := os.WriteFile(filepath.Join(tree, "overlays", "provided-certificate", "ca.crt"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}

	// A server-side dry run creates nothing, so every namespaced object of a build would be
	// refused for want of the Namespace the same build only pretends to create. Create that
	// Namespace first, for real, exactly as config/default renders it: its Pod Security
	// labels then make the dry run warn about a pod template the restricted profile
	// forbids, and a warning fails the test.
	nsYAML, err := json.Marshal(only(t, render(t, filepath.Join(tree, "default")), "Namespace").Object)
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := c.kubectl(nsYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("create the Namespace config/default renders: %v\n%s", err, stderr)
	}

	t.Run("provided-certificate without cert-manager", func(t *testing.T) {
		out := c.dryRun(t, filepath.Join(tree, "overlays", "provided-certificate"), "-o", "json")
		var list struct {
			Items []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Webhooks   []struct {
					Name         string `json:"name"`
					ClientConfig struct {
						CABundle []byte `json:"caBundle"`
					} `json:"clientConfig"`
				} `json:"webhooks"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("kubectl apply -o json: %v", err)
		}
		hooks := 0
		for _, item := range list.Items {
			if strings.HasPrefix(item.APIVersion, "cert-manager.io/") {
				t.Errorf("the overlay without cert-manager still renders a %s", item.Kind)
			}
			for _, h := range item.Webhooks {
				hooks++
				if !bytes.Equal(h.ClientConfig.CABundle, caPEM) {
					t.Errorf("webhook %s: caBundle %q, want ca.crt", h.Name, h.ClientConfig.CABundle)
				}
			}
		}
		if hooks != 3 {
			t.Errorf("the API server admitted %d webhooks, want the 3", hooks)
		}
	})

	install(t, c, filepath.Join(crds, "cert-manager.io_certificates.yaml"), filepath.Join(crds, "cert-manager.io_issuers.yaml"))
	t.Run("default", func(t *testing.T) { c.dryRun(t, filepath.Join(tree, "default")) })
	t.Run("ingress", func(t *testing.T) { c.dryRun(t, filepath.Join(tree, "overlays", "ingress")) })

	t.Run("prometheus", func(t *testing.T) {
		dir := filepath.Join(tree, "overlays", "prometheus")
		_, stderr, err := c.kubectl(nil, "apply", "--dry-run=server", "-k", dir)
		if err == nil || !strings.Contains(stderr, `no matches for kind "ServiceMonitor"`) {
			t.Fatalf("dry run of %s without the ServiceMonitor CRD: %v, want it refused for the kind\n%s", dir, err, stderr)
		}
		install(t, c, filepath.Join(crds, "monitoring.coreos.com_servicemonitors.yaml"))
		c.dryRun(t, dir)
	})
}

// dryRun runs `kubectl apply --dry-run=server -k dir` with extra arguments and returns
// its output. It fails the test if kubectl fails, warns, or reports fewer objects than
// the kustomization renders.
func (c *cluster) dryRun(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{"apply", "--dry-run=server", "-k", dir}, extra...)
	out, stderr, err := c.kubectl(nil, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if strings.Contains(stderr, "Warning:") {
		t.Errorf("kubectl %s warned:\n%s", strings.Join(args, " "), stderr)
	}
	if len(extra) == 0 {
		want := len(render(t, dir))
		if got := strings.Count(out, "(server dry run)"); got != want {
			t.Errorf("kubectl %s applied %d objects, the kustomization renders %d:\n%s", strings.Join(args, " "), got, want, out)
		}
	}
	return out
}

// install creates the CRDs in files, for real, and waits until they are served.
func install(t *testing.T, c *cluster, files ...string) {
	t.Helper()
	if _, err := envtest.InstallCRDs(c.cfg, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("install CRDs %v: %v", files, err)
	}
}

// externalCRDs is the directory hack/setup-crds.sh fills with cert-manager's and the
// Prometheus operator's CRDs.
func externalCRDs(t *testing.T) string {
	t.Helper()
	return testcluster.EnvDir(t, "CAIRN_EXTERNAL_CRDS", "hack/setup-crds.sh")
}

// newCACertificate returns the PEM certificate of a new self-signed CA, as a user of the
// provided-certificate overlay puts in its ca.crt.
func newCACertificate(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn webhook test CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
