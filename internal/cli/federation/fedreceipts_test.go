package federation

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// loggedReceiptVector returns pkg/protocol's receipt-logged vector (docs/PROTOCOL.md §7:
// a current-format receipt whose tlog_entry verifies), the federation key that signed it
// (seed 03…03) and the pending receipt of the same anchor that key signs.
func loggedReceiptVector(t *testing.T) (logged, pending json.RawMessage, fedKey ed25519.PrivateKey, logKeyPEM string) {
	t.Helper()
	raw, err := os.ReadFile("../../../pkg/protocol/testdata/vectors/receipt-logged.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Inputs map[string]string `json:"inputs"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	logged = json.RawMessage(v.Inputs["receipt"])
	var r protocol.Receipt
	if err := json.Unmarshal(logged, &r); err != nil {
		t.Fatal(err)
	}
	fedKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	logKeyPEM = *r.TLogPublicKeyPEM
	weaker := protocol.Receipt{AnchorID: r.AnchorID, AnchoredAt: r.AnchoredAt, CrossAnchorHash: r.CrossAnchorHash,
		ParticipatingOperators: r.ParticipatingOperators}
	if pending, err = protocol.SignReceipt(&weaker, fedKey); err != nil {
		t.Fatal(err)
	}
	return logged, pending, fedKey, logKeyPEM
}

// TestReceiptsNeverReplaceALoggedReceiptWithAWeakerOne is issue 33's attack: the
// federation serves, after a logged receipt, the older pending receipt of the same anchor
// (signed by the same key, verifying offline). The kept file is the operator's only copy
// of the log proof: it must stay, and the command must say so (exit 3), not report the
// weaker copy written.
func TestReceiptsNeverReplaceALoggedReceiptWithAWeakerOne(t *testing.T) {
	logged, pending, fedKey, logKeyPEM := loggedReceiptVector(t)
	f := newFakeFederation(t)
	f.fedKey = fedKey
	f.routes["GET /federation/status"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"federation_public_key": f.publicKeyPEM(), "tlog_public_key": logKeyPEM, "version": "test"})
	}
	served := logged
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": "op_34750f98bd59fcfc", "receipts": []json.RawMessage{served}})
	}
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	cfg := t.TempDir()
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: []byte(f.publicKeyPEM()), LogKeyPEM: []byte(logKeyPEM)}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "receipts")
	kept := filepath.Join(outDir, "anchor-20261121-001.json")
	receipts := func() (string, error) {
		return runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
			"--operator-id", id, "--private-key", priv, "--output-dir", outDir)
	}
	if out, err := receipts(); err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("receipts of the logged receipt: %v\n%s", err, out)
	}
	first, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}

	served = pending
	out, err := receipts()
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "weaker") {
		t.Fatalf("receipts serving the pending receipt after the logged one: exit %d, want %d saying the kept one is stronger\n%s",
			cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	if b, _ := os.ReadFile(kept); !bytes.Equal(b, first) {
		t.Fatalf("the logged receipt was replaced by the pending one:\n%s", b)
	}

	// The pending receipt kept, the logged one replaces it.
	if err := os.WriteFile(kept, pending, 0o644); err != nil {
		t.Fatal(err)
	}
	served = logged
	if out, err := receipts(); err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("the logged receipt over a kept pending one: %v\n%s", err, out)
	}
}
