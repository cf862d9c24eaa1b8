package federation

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// fakeFederation answers the federation API from handlers, counting every request, so a
// test can say that a command sent nothing, or only what it must.
type fakeFederation struct {
	*httptest.Server
	fedKey ed25519.PrivateKey
	mu     sync.Mutex
	count  map[string]int // "METHOD path" -> requests
	routes map[string]http.HandlerFunc
}

func newFakeFederation(t *testing.T) *fakeFederation {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeFederation{fedKey: key, count: map[string]int{}, routes: map[string]http.HandlerFunc{}}
	f.routes["GET /federation/status"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"federation_public_key": f.publicKeyPEM(), "tlog_public_key": "", "version": "test"})
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + r.URL.Path
		f.mu.Lock()
		f.count[route]++
		h := f.routes[route]
		f.mu.Unlock()
		if h == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": route})
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeFederation) publicKeyPEM() string {
	b, _ := protocol.MarshalPublicKeyPEM(f.fedKey.Public().(ed25519.PublicKey))
	return string(b)
}

// requests returns how many requests route got; "" counts them all.
func (f *fakeFederation) requests(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for r, c := range f.count {
		if route == "" || r == route {
			n += c
		}
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// operatorKeys writes a key pair with cairn keygen into dir/keys and returns the
// private key's path, the public key's path and the operator ID.
func operatorKeys(t *testing.T, dir string) (priv, pub, id string) {
	t.Helper()
	keys := filepath.Join(dir, "keys")
	if out, err := runCairn(t, "keygen", "--output-dir", keys); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	priv, pub = filepath.Join(keys, "private.pem"), filepath.Join(keys, "public.pem")
	key, err := cmdutil.LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub, protocol.OperatorID(key.Public().(ed25519.PublicKey))
}

// TestRegisterDryRunSendsNothing: register --dry-run prints the registration without a
// challenge, sends no request and records nothing.
func TestRegisterDryRunSendsNothing(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, pub, id := operatorKeys(t, dir)
	cfg := filepath.Join(dir, "config")
	out, err := runCairn(t, "federation", "register", "--dry-run", "--service", f.URL, "--config-dir", cfg,
		"--public-key", pub, "--private-key", priv, "--org", "Acme")
	if err != nil {
		t.Fatalf("register --dry-run: %v\n%s", err, out)
	}
	var got dryRunRegistration
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.OperatorID != id || got.ProofOfPossession == "" {
		t.Fatalf("register --dry-run printed %q (%v), want the registration of %s", out, err, id)
	}
	if n := f.requests(""); n != 0 {
		t.Fatalf("register --dry-run sent %d requests, want none", n)
	}
	if _, err := os.Stat(cfg); !os.IsNotExist(err) {
		t.Fatalf("register --dry-run wrote the config directory: %v", err)
	}
}

// TestSubmitDryRunPostsNothing: submit --dry-run --export sends no request at all;
// --dry-run --db reads the federation's keys and the last accepted seq and posts nothing.
func TestSubmitDryRunPostsNothing(t *testing.T) {
	f := newFakeFederation(t)
	f.routes["GET /federation/operator/"] = nil
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["GET /federation/operator/"+id] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "submissions": []map[string]any{{"last_seq": 2}}})
	}
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 5), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	export := filepath.Join(dir, "export.json")
	if out, err := runCairn(t, "export", "--sign-key", priv, "--output", export, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	common := []string{"federation", "submit", "--dry-run", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv}
	out, err := runCairn(t, append(common, "--export", export)...)
	if err != nil || !strings.Contains(out, `"first_seq": 1`) {
		t.Fatalf("submit --dry-run --export: %v\n%s", err, out)
	}
	if n := f.requests(""); n != 0 {
		t.Fatalf("submit --dry-run --export sent %d requests, want none", n)
	}
	out, err = runCairn(t, append(common, "--db", db, "--secret-hex", testSecretHex)...)
	if err != nil || !strings.Contains(out, `"first_seq": 3`) || !strings.Contains(out, `"last_seq": 5`) {
		t.Fatalf("submit --dry-run --db: %v\n%s", err, out)
	}
	// The keys are checked before the read (and pinned by no dry run).
	if n, reads, keys := f.requests(""), f.requests("GET /federation/operator/"+id), f.requests("GET /federation/status"); n != 2 || reads != 1 || keys != 1 {
		t.Fatalf("submit --dry-run --db sent %d requests (%d reads of the operator, %d of the keys), want those two reads", n, reads, keys)
	}
}

// TestSubmitPrintsTheContinuityViolation: a 422 continuity_violation prints the hash the
// federation expected, the one the export starts from and the hint, and exits 1.
func TestSubmitPrintsTheContinuityViolation(t *testing.T) {
	f := newFakeFederation(t)
	expected, got := strings.Repeat("a", 64), strings.Repeat("b", 64)
	f.routes["POST /federation/submit"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": "continuity_violation", "message": "does not continue",
			"expected_first_prev_hash": expected, "got_first_prev_hash": got, "previous_submission_id": "sub-1",
			"hint": "Check for a missing archive or local chain rewind."})
	}
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	export := filepath.Join(dir, "export.json")
	if err := os.WriteFile(export, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCairn(t, "federation", "submit", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv, "--export", export)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError {
		t.Fatalf("exit %d, want %d\n%s", code, cmdutil.ExitError, out)
	}
	for _, want := range []string{"continuity_violation", "expected first_prev_hash  " + expected, "got first_prev_hash       " + got,
		"hint: Check for a missing archive"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPinnedKeysRefuseAnotherFederationKey: once a key is pinned, a federation presenting
// another is refused (exit 3) by status and register, and register then posts nothing;
// --trust-new-key pins the new key.
func TestPinnedKeysRefuseAnotherFederationKey(t *testing.T) {
	f := newFakeFederation(t)
	f.routes["GET /federation/register/challenge"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"nonce": "cairn-challenge:" + strings.Repeat("A", 75)})
	}
	cfg := t.TempDir()
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherPEM, _ := protocol.MarshalPublicKeyPEM(other.Public().(ed25519.PublicKey))
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: otherPEM}); err != nil {
		t.Fatal(err)
	}
	status := []string{"federation", "status", "--service", f.URL, "--config-dir", cfg}
	if out, err := runCairn(t, status...); cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "CHANGED") {
		t.Fatalf("status with another key pinned: exit %d, want %d\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	dir := t.TempDir()
	priv, pub, _ := operatorKeys(t, dir)
	out, err := runCairn(t, "federation", "register", "--service", f.URL, "--config-dir", cfg,
		"--public-key", pub, "--private-key", priv, "--org", "Acme")
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || f.requests("GET /federation/register/challenge")+f.requests("POST /federation/register") != 0 {
		t.Fatalf("register with another key pinned: exit %d, want %d and nothing signed or posted\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	if out, err := runCairn(t, append(status, "--trust-new-key")...); err != nil {
		t.Fatalf("status --trust-new-key: %v\n%s", err, out)
	}
	if out, err := runCairn(t, status...); err != nil || !strings.Contains(out, "keys            pinned") {
		t.Fatalf("status after --trust-new-key: %v\n%s", err, out)
	}
}

// TestReceiptsWritesOnlyWhatVerifies: a receipt signed by the pinned key is written; one
// signed by another key, served beside it, is reported and not written (exit 3).
func TestReceiptsWritesOnlyWhatVerifies(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	_, forger, _ := ed25519.GenerateKey(rand.Reader)
	good := receiptSignedBy(t, f.fedKey, "anchor-20261125-001", id)
	forged := receiptSignedBy(t, forger, "anchor-20261125-002", id)
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "receipts": []json.RawMessage{forged, good}})
	}
	cfg := t.TempDir()
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: []byte(f.publicKeyPEM())}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "receipts")
	out, err := runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
		"--operator-id", id, "--private-key", priv, "--output-dir", outDir)
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "REFUSED   anchor-20261125-002") {
		t.Fatalf("receipts: exit %d, want %d with the forged one refused\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	var served bytes.Buffer // the fake server sends it compacted
	if err := json.Compact(&served, good); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "anchor-20261125-001.json")); err != nil || !bytes.Equal(b, served.Bytes()) {
		t.Fatalf("the verified receipt was not written as served: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(outDir, "anchor-20261125-002.json")); !os.IsNotExist(err) {
		t.Fatalf("the forged receipt was written: %v", err)
	}
}

// A receipt that verifies but names the anchor ID of another anchor kept on disk (a
// federation restored without its anchors' IDs, or one showing two anchors under one
// ID) is refused and the kept copy stays: the same anchor's re-signed receipt replaces it.
func TestReceiptsKeepAnotherAnchorOfTheSameID(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	served := receiptSignedBy(t, f.fedKey, "anchor-20261125-001", id)
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "receipts": []json.RawMessage{served}})
	}
	cfg := t.TempDir()
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: []byte(f.publicKeyPEM())}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "receipts")
	kept := filepath.Join(outDir, "anchor-20261125-001.json")
	receipts := func() (string, error) {
		return runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
			"--operator-id", id, "--private-key", priv, "--output-dir", outDir)
	}
	if out, err := receipts(); err != nil {
		t.Fatalf("receipts: %v\n%s", err, out)
	}

	// Another anchor under the same ID: refused, the kept one stays.
	first, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	served = receiptSignedByWith(t, f.fedKey, "anchor-20261125-001", id, strings.Repeat("2", 64))
	out, err := receipts()
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "holds another anchor under this ID") {
		t.Fatalf("receipts of another anchor under a kept ID: exit %d, want %d naming the conflict\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	if b, _ := os.ReadFile(kept); !bytes.Equal(b, first) {
		t.Fatalf("the kept receipt was replaced by another anchor's:\n%s", b)
	}

	// The same anchor signed again (other bytes, same cross_anchor_hash) replaces it.
	_, newKey, _ := ed25519.GenerateKey(rand.Reader)
	f.fedKey = newKey
	served = receiptSignedBy(t, newKey, "anchor-20261125-001", id)
	if out, err := runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg, "--trust-new-key",
		"--operator-id", id, "--private-key", priv, "--output-dir", outDir); err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("receipts of the same anchor re-signed: %v\n%s", err, out)
	}
}

// receiptSignedBy returns a receipt of anchorID naming operator id, signed by key.
func receiptSignedBy(t *testing.T, key ed25519.PrivateKey, anchorID, id string) json.RawMessage {
	t.Helper()
	return receiptSignedByWith(t, key, anchorID, id, strings.Repeat("1", 64))
}

// receiptSignedByWith is receiptSignedBy binding chainSignature for the operator.
func receiptSignedByWith(t *testing.T, key ed25519.PrivateKey, anchorID, id, chainSignature string) json.RawMessage {
	t.Helper()
	ps := []protocol.Participant{{OperatorID: id, ChainSignature: chainSignature}}
	at := protocol.FormatAnchoredAt(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC))
	hash, err := protocol.CrossAnchorHash(ps, at)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protocol.SignReceipt(&protocol.Receipt{AnchorID: anchorID, AnchoredAt: at, CrossAnchorHash: hash, ParticipatingOperators: ps}, key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
