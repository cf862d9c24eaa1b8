package dev

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// The serving certificate verifies for 127.0.0.1 under the CA the configuration is given,
// and for nothing else; the key is readable by its owner alone.
func TestDevWebhookCertsServe127001(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	caPEM, err := writeDevWebhookCerts(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, devWebhookCertFile), filepath.Join(dir, devWebhookKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA is not PEM")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: roots, DNSName: devWebhookHost, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		t.Errorf("the serving certificate does not verify for %s: %v", devWebhookHost, err)
	}
	opts.DNSName = "10.0.0.1"
	if _, err := leaf.Verify(opts); err == nil {
		t.Error("the serving certificate verifies for 10.0.0.1")
	}
	other, err := writeDevWebhookCerts(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AppendCertsFromPEM(other)
	opts.Roots, opts.DNSName = otherRoots, devWebhookHost
	if _, err := leaf.Verify(opts); err == nil {
		t.Error("the serving certificate verifies under another start's CA")
	}
	if fi, err := os.Stat(filepath.Join(dir, devWebhookKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("tls.key: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
}

func TestDevWebhooksListenOnAFreeLoopbackPort(t *testing.T) {
	o := newDevOptions()
	o.env.Dir = t.TempDir()
	if err := o.completeWebhooks(); err != nil {
		t.Fatal(err)
	}
	w := o.manager.Webhooks
	if !w.Enable || w.Host != devWebhookHost || w.Port == 0 || w.CertDir != filepath.Join(o.env.Dir, devWebhookCertsDir) {
		t.Fatalf("webhooks %+v, want on %s, a port, certificates in the dev directory", w, devWebhookHost)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(devWebhookHost, strconv.Itoa(w.Port)))
	if err != nil {
		t.Fatalf("the port picked is not free: %v", err)
	}
	_ = l.Close()
	if got, want := o.webhookURL(), "https://127.0.0.1:"+strconv.Itoa(w.Port); got != want {
		t.Errorf("webhook URL %s, want %s", got, want)
	}

	// A port and a directory given are kept.
	o = newDevOptions()
	o.manager.Webhooks.Port, o.manager.Webhooks.CertDir = 9443, "/etc/certs"
	if err := o.completeWebhooks(); err != nil || o.manager.Webhooks.Port != 9443 || o.manager.Webhooks.CertDir != "/etc/certs" {
		t.Fatalf("given port and directory: %+v, %v", o.manager.Webhooks, err)
	}
}

func TestDevDemoNeedsTheFederationAPI(t *testing.T) {
	_, err := runCairn(t, "dev", "--assets", t.TempDir(), "--demo", "--federation-bind-address", "0")
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), "--demo needs the federation API") {
		t.Fatalf("cairn dev --demo --federation-bind-address 0: %v", err)
	}
}
