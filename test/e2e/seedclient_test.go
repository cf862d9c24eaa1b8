package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/test/seedclient"
)

// TestSeedClientStory runs the client written from the seed's endpoint table alone
// (test/seedclient: the standard library, nothing of Cairn) through an operator's whole
// story against `cairn manager` on a real API server. The harness makes what operators
// hold with the binary: keys (`cairn keygen`), chains (`cairn chain seal`) and signed
// exports (`cairn export`), one of them signed by the key A rotates to.
func TestSeedClientStory(t *testing.T) {
	c, kubeconfig := startAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns = "seed-client"
	api, _, _ := startFederationOf(ctx, t, c, kubeconfig, ns, fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, 2)

	a, b := seedOperator(t, 5), seedOperator(t, 6)
	aNew := t.TempDir()
	cairnOK(t, "keygen", "--output-dir", aNew)
	story := seedclient.Story{
		Base:       api.base,
		AdminToken: secretValue(ctx, t, c, ns, "fed-admin", federation.AdminTokenSecretKey),
		A: seedclient.Operator{OrgName: "Acme Research", ContactEmail: "ops@acme.example",
			PrivateKeyPEM: readFile(t, filepath.Join(a, "private.pem")), PublicKeyPEM: readFile(t, filepath.Join(a, "public.pem")),
			Export: seedExport(t, a, filepath.Join(a, "private.pem"), "--range", "1:3")},
		B: seedclient.Operator{OrgName: "Globex",
			PrivateKeyPEM: readFile(t, filepath.Join(b, "private.pem")), PublicKeyPEM: readFile(t, filepath.Join(b, "public.pem")),
			Export: seedExport(t, b, filepath.Join(b, "private.pem"), "--range", "1:4")},
		BGap:              seedExport(t, b, filepath.Join(b, "private.pem"), "--range", "6:6"),
		ANewPrivateKeyPEM: readFile(t, filepath.Join(aNew, "private.pem")),
		ANewPublicKeyPEM:  readFile(t, filepath.Join(aNew, "public.pem")),
		AAfterRotation:    seedExport(t, a, filepath.Join(aNew, "private.pem"), "--after-seq", "3"),
		Logf:              t.Logf,
	}
	if err := seedclient.Run(ctx, story); err != nil {
		t.Fatalf("the seed's client: %v", err)
	}
}

// seedSecret is the chains' HMAC secret.
var seedSecret = "--secret-hex=" + strings.Repeat("5a", 32)

// seedOperator makes a directory with a key pair and a chain of n spans.
func seedOperator(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	cairnOK(t, "keygen", "--output-dir", dir)
	spans := writeFile(t, dir, "spans.jsonl", spanLines(0, n))
	cairnOK(t, "chain", "seal", "--db", filepath.Join(dir, "chain.db"), "--file", spans, seedSecret)
	return dir
}

// seedExport exports the chain in dir, signed by signKey, with the range flags given.
func seedExport(t *testing.T, dir, signKey string, window ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export.json")
	cairnOK(t, append([]string{"export", "--db", filepath.Join(dir, "chain.db"), "--sign-key", signKey, "--output", out, seedSecret}, window...)...)
	return readFile(t, out)
}

// cairnOK runs the binary and fails t unless it exits 0.
func cairnOK(t *testing.T, args ...string) {
	t.Helper()
	if code, out := runCairn(t, args...); code != 0 {
		t.Fatal(fmt.Sprintf("cairn %s: exit %d\n%s", strings.Join(args, " "), code, out))
	}
}
