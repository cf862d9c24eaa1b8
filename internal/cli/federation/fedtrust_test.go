package federation

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// pinOtherKey pins, for f, a federation key f does not hold, and returns its fingerprint.
func pinOtherKey(t *testing.T, f *fakeFederation, cfg string) string {
	t.Helper()
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherPEM, _ := protocol.MarshalPublicKeyPEM(other.Public().(ed25519.PublicKey))
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: otherPEM}); err != nil {
		t.Fatal(err)
	}
	return protocol.Fingerprint(other.Public().(ed25519.PublicKey))
}

// TestSubmitRefusesAChangedFederationKey: a federation presenting another key than the
// pinned one gets nothing from submit: no export is made, no request carries a token,
// the only request is the read of its keys; the message names both fingerprints and how
// to pin the new key.
func TestSubmitRefusesAChangedFederationKey(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["GET /federation/operator/"+id] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "submissions": []map[string]any{}})
	}
	f.routes["POST /federation/submit"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"submission_id": "sub-1", "operator_id": id, "verified": true})
	}
	cfg := t.TempDir()
	pinned := pinOtherKey(t, f, cfg)
	presented := protocol.Fingerprint(f.fedKey.Public().(ed25519.PublicKey))

	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 3), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	export := filepath.Join(dir, "export.json")
	if out, err := runCairn(t, "export", "--sign-key", priv, "--output", export, "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	saved := filepath.Join(dir, "sent.json")
	common := []string{"federation", "submit", "--service", f.URL, "--config-dir", cfg, "--operator-id", id, "--private-key", priv}
	for _, args := range [][]string{
		append(append([]string(nil), common...), "--export", export),
		append(append([]string(nil), common...), "--db", db, "--secret-hex", testSecretHex, "--save-export", saved),
	} {
		before := f.requests("")
		out, err := runCairn(t, args...)
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitMismatch {
			t.Fatalf("submit %s with another key pinned: exit %d, want %d\n%s", args[len(args)-2], code, cmdutil.ExitMismatch, out)
		}
		if n := f.requests("") - before; n != 1 || f.requests("GET /federation/status") == 0 {
			t.Fatalf("submit with another key pinned sent %d requests, want only the read of the keys", n)
		}
		if f.requests("POST /federation/submit")+f.requests("GET /federation/operator/"+id) != 0 {
			t.Fatal("submit talked to a federation whose key is not the pinned one")
		}
		for _, want := range []string{pinned, presented, "cairn federation trust --service " + f.URL} {
			if !strings.Contains(err.Error()+out, want) {
				t.Errorf("submit's refusal lacks %q:\n%v\n%s", want, err, out)
			}
		}
	}
	if _, err := os.Stat(saved); !os.IsNotExist(err) {
		t.Fatalf("submit --db exported for a federation whose key is not the pinned one: %v", err)
	}
}

// TestTrustPinsWhatTheFederationPresents: trust shows the fingerprints; off a terminal it
// pins only with --yes; an operator registered the GitOps way can then fetch its receipts.
func TestTrustPinsWhatTheFederationPresents(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	good := receiptSignedBy(t, f.fedKey, "anchor-20261125-001", id)
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "receipts": []json.RawMessage{good}})
	}
	cfg := t.TempDir()
	fp := protocol.Fingerprint(f.fedKey.Public().(ed25519.PublicKey))
	trust := []string{"federation", "trust", "--service", f.URL, "--config-dir", cfg}

	out, err := runCairn(t, trust...)
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(out, "sha256:"+fp) || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("trust off a terminal without --yes: exit %d, want %d showing sha256:%s and naming --yes\n%v\n%s", cmdutil.ExitCode(err), cmdutil.ExitUsage, fp, err, out)
	}
	if pins, _ := clientconfig.Dir(cfg).Pins(f.URL); pins != nil {
		t.Fatal("trust without --yes pinned the keys")
	}
	if out, err := runCairn(t, append(trust, "--yes")...); err != nil || !strings.Contains(out, "sha256:"+fp) {
		t.Fatalf("trust --yes: %v\n%s", err, out)
	}
	if pins, err := clientconfig.Dir(cfg).Pins(f.URL); err != nil || pins == nil || protocol.Fingerprint(pins.FederationKey) != fp {
		t.Fatalf("trust --yes pinned %+v (%v), want %s", pins, err, fp)
	}
	out, err = runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
		"--operator-id", id, "--private-key", priv, "--output-dir", filepath.Join(dir, "receipts"))
	if err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("receipts after trust: %v\n%s", err, out)
	}

	// Another key: trust shows both and replaces the pin only with --yes.
	_, newKey, _ := ed25519.GenerateKey(rand.Reader)
	f.fedKey = newKey
	newFP := protocol.Fingerprint(newKey.Public().(ed25519.PublicKey))
	if out, err := runCairn(t, trust...); cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(out, fp) || !strings.Contains(out, newFP) {
		t.Fatalf("trust of a changed key without --yes: exit %d, want %d naming both keys\n%s", cmdutil.ExitCode(err), cmdutil.ExitUsage, out)
	}
	if out, err := runCairn(t, append(trust, "--yes")...); err != nil {
		t.Fatalf("trust --yes of a changed key: %v\n%s", err, out)
	}
	if pins, _ := clientconfig.Dir(cfg).Pins(f.URL); pins == nil || protocol.Fingerprint(pins.FederationKey) != newFP {
		t.Fatal("trust --yes did not pin the new key")
	}
}

// TestStatusTrustNewKeyPinsWhenNothingIs: status --trust-new-key pins the keys of a
// federation nothing was pinned for.
func TestStatusTrustNewKeyPinsWhenNothingIs(t *testing.T) {
	f := newFakeFederation(t)
	cfg := t.TempDir()
	if out, err := runCairn(t, "federation", "status", "--service", f.URL, "--config-dir", cfg, "--trust-new-key"); err != nil {
		t.Fatalf("status --trust-new-key: %v\n%s", err, out)
	}
	pins, err := clientconfig.Dir(cfg).Pins(f.URL)
	if err != nil || pins == nil || !pins.FederationKey.Equal(f.fedKey.Public()) {
		t.Fatalf("status --trust-new-key pinned %+v (%v), want the federation's key", pins, err)
	}
}
