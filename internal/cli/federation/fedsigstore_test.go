package federation

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// receipts --format sigstore-bundle writes each logged receipt's bundle beside it, made
// from the verified receipt, and the federation's trusted root only when the log key it
// names is the trusted one.
func TestReceiptsWriteSigstoreBundles(t *testing.T) {
	logged, _, fedKey, logKeyPEM := loggedReceiptVector(t)
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(logKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeFederation(t)
	f.fedKey = fedKey
	f.routes["GET /federation/status"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"federation_public_key": f.publicKeyPEM(), "tlog_public_key": logKeyPEM, "version": "test"})
	}
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": "op_34750f98bd59fcfc", "receipts": []json.RawMessage{logged}})
	}
	rootKey := logKey
	f.routes["GET /federation/log/trusted-root"] = func(w http.ResponseWriter, _ *http.Request) {
		root, err := sigstorebundle.NewTrustedRoot([]sigstorebundle.Log{{BaseURL: "https://log.example", Key: rootKey, Since: time.Unix(0, 0)}}, nil)
		if err != nil {
			t.Error(err)
		}
		writeJSON(w, http.StatusOK, root)
	}
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	cfg := t.TempDir()
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: []byte(f.publicKeyPEM()), LogKeyPEM: []byte(logKeyPEM)}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "receipts")
	receipts := func(format string) (string, error) {
		return runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
			"--operator-id", id, "--private-key", priv, "--output-dir", outDir, "--format", format)
	}

	if out, err := receipts("sigstore"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("--format sigstore: exit %d, want %d\n%s", cmdutil.ExitCode(err), cmdutil.ExitUsage, out)
	}
	out, err := receipts(formatSigstoreBundle)
	if err != nil || !strings.Contains(out, "bundle ") || !strings.Contains(out, "trusted_root.json") {
		t.Fatalf("receipts --format sigstore-bundle: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(outDir, "anchor-20261121-001.sigstore.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b sigstorebundle.Bundle
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	var r protocol.Receipt
	if err := json.Unmarshal(logged, &r); err != nil {
		t.Fatal(err)
	}
	content, err := protocol.CrossAnchorLogContent(r.CrossAnchorHash)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := base64.StdEncoding.DecodeString(b.MessageSignature.MessageDigest.Digest)
	sig, _ := base64.StdEncoding.DecodeString(b.MessageSignature.Signature)
	if b.MediaType != sigstorebundle.BundleMediaType || len(b.VerificationMaterial.TlogEntries) != 1 {
		t.Fatalf("bundle: %s", raw)
	}
	if err := ed25519.VerifyWithOptions(fedKey.Public().(ed25519.PublicKey), digest, sig, &ed25519.Options{Hash: crypto.SHA512}); err != nil {
		t.Errorf("the bundle's message signature does not verify over its digest: %v", err)
	}
	if err := protocol.VerifyHashedRekord(mustDecode(t, b.VerificationMaterial.TlogEntries[0].CanonicalizedBody), content, nil); err != nil {
		t.Errorf("the bundle's entry does not log the anchor: %v", err)
	}

	// A federation on its embedded log has no trusted root: nothing is written, and the
	// command says why.
	fresh := filepath.Join(dir, "embedded")
	served := f.routes["GET /federation/log/trusted-root"]
	f.routes["GET /federation/log/trusted-root"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "log_not_served", "message": "embedded"})
	}
	out, err = runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
		"--operator-id", id, "--private-key", priv, "--output-dir", fresh, "--format", formatSigstoreBundle)
	if err == nil || !strings.Contains(out+err.Error(), "embedded log") {
		t.Fatalf("receipts --format sigstore-bundle of an embedded-log federation: %v\n%s", err, out)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("something was written for an embedded-log federation: %v", err)
	}
	f.routes["GET /federation/log/trusted-root"] = served

	// A trusted root naming another log key is not written.
	if err := os.Remove(filepath.Join(outDir, "trusted_root.json")); err != nil {
		t.Fatal(err)
	}
	rootKey = fedKey.Public()
	if out, err := receipts(formatSigstoreBundle); err == nil || !strings.Contains(out+err.Error(), "log key other than the trusted one") {
		t.Fatalf("a trusted root of another log key: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(outDir, "trusted_root.json")); !os.IsNotExist(err) {
		t.Errorf("the trusted root of another log key was written: %v", err)
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
