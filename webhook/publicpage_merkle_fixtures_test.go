package webhook

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// merkleReceiptAmong is the pending receipt, signed by key, of the participant at holder
// of a Merkle anchor of n: the others' leaf hashes stand for their leaves (the tree
// above them is real).
func merkleReceiptAmong(t *testing.T, key ed25519.PrivateKey, n, holder uint64) []byte {
	t.Helper()
	leaf := protocol.MerkleLeaf{OperatorID: protocol.OperatorID(key.Public().(ed25519.PublicKey)),
		ChainSignature: protocol.ChainSignature([]byte("0123456789abcdef"), hash64(holder), 7), LastSeq: 7}
	hashes := make([]anchortree.Hash, n)
	for i := range hashes {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		hashes[i] = sha256.Sum256(b[:])
	}
	var err error
	if hashes[holder], err = leaf.Hash(); err != nil {
		t.Fatal(err)
	}
	tree := anchortree.FromLeafHashes(hashes)
	proof, err := tree.InclusionProof(holder)
	if err != nil {
		t.Fatal(err)
	}
	at := protocol.FormatAnchoredAt(time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC))
	hash, err := protocol.MerkleAnchorHash(tree.Root(), n, at)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protocol.SignReceipt(&protocol.Receipt{AnchorID: "anchor-20261202-001", AnchoredAt: at, CrossAnchorHash: hash,
		AnchorForm: protocol.MerkleForm, Leaf: &leaf, InclusionProof: proof}, key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// hash64 is a hex hash made from n.
func hash64(n uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:])
}

// editReceipt is receipt raw with edit applied to its members, not signed again.
func editReceipt(t *testing.T, raw []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
