package federation

import (
	"crypto/sha256"
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
)

// merkleReceiptOf is the federation's pending Merkle-form receipt of leaf index of a
// two-leaf anchor, whose leaves are (operator, 40) and (other, 41), signed by f's key.
func merkleReceiptOf(t *testing.T, f *fakeFederation, operator, other string, index int) json.RawMessage {
	t.Helper()
	leaves := []protocol.MerkleLeaf{{OperatorID: operator, ChainSignature: strings.Repeat("5a", 32), LastSeq: 40},
		{OperatorID: other, ChainSignature: strings.Repeat("5b", 32), LastSeq: 41}}
	var hashes [2][32]byte
	for i, l := range leaves {
		var err error
		if hashes[i], err = l.Hash(); err != nil {
			t.Fatal(err)
		}
	}
	root := sha256.Sum256(append(append([]byte{0x01}, hashes[0][:]...), hashes[1][:]...))
	at := protocol.FormatAnchoredAt(time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC))
	hash, err := protocol.MerkleAnchorHash(root, 2, at)
	if err != nil {
		t.Fatal(err)
	}
	sibling := hashes[1-index]
	raw, err := protocol.SignReceipt(&protocol.Receipt{AnchorID: "anchor-20261202-001", AnchoredAt: at, CrossAnchorHash: hash,
		AnchorForm: protocol.MerkleForm, Leaf: &leaves[index], InclusionProof: &protocol.LeafInclusionProof{LeafIndex: uint64(index), TreeSize: 2,
			RootHash: base64.StdEncoding.EncodeToString(root[:]), Hashes: []string{base64.StdEncoding.EncodeToString(sibling[:])}}}, f.fedKey)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReceiptsKeepOnlyTheOperatorsOwnLeaf: every participant's Merkle-form receipt of an
// anchor has the same cross_anchor_hash and verifies under the federation's key, so a
// federation could serve an operator another participant's. `cairn federation receipts`
// keeps a Merkle receipt only when its leaf is the operator's (exit 3 otherwise), and a
// receipt proving another leaf of the same anchor (a federation that put the operator in
// twice) never replaces the kept one.
func TestReceiptsKeepOnlyTheOperatorsOwnLeaf(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	var served json.RawMessage
	f.routes["GET /federation/receipts"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "receipts": []json.RawMessage{served}})
	}
	cfg := t.TempDir()
	if err := clientconfig.Dir(cfg).SavePins(f.URL, clientconfig.Presented{FederationKeyPEM: []byte(f.publicKeyPEM())}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "receipts")
	kept := filepath.Join(outDir, "anchor-20261202-001.json")
	receipts := func() (string, error) {
		return runCairn(t, "federation", "receipts", "--service", f.URL, "--config-dir", cfg,
			"--operator-id", id, "--private-key", priv, "--output-dir", outDir)
	}

	const other = "op_0123456789abcdef"
	served = merkleReceiptOf(t, f, id, other, 1)
	out, err := receipts()
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "proves the leaf of op_0123456789abcdef") {
		t.Fatalf("another operator's leaf: exit %d, want %d refusing it\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	if _, err := os.Stat(kept); err == nil {
		t.Fatal("another operator's receipt was kept")
	}

	served = merkleReceiptOf(t, f, id, id, 0)
	if out, err := receipts(); err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("the operator's own leaf: %v\n%s", err, out)
	}
	first, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	// The tree the federation made has two leaves of the operator: both receipts verify,
	// with the anchor's one hash.
	served = merkleReceiptOf(t, f, id, id, 1)
	out, err = receipts()
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(out, "another leaf") {
		t.Fatalf("another leaf of the operator: exit %d, want %d refusing it\n%s", cmdutil.ExitCode(err), cmdutil.ExitMismatch, out)
	}
	if b, _ := os.ReadFile(kept); string(b) != string(first) {
		t.Fatalf("the kept receipt was replaced:\n%s", b)
	}
}
