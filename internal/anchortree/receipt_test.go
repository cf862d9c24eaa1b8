package anchortree

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// millionReceipt is the signed pending receipt of leaf 777,777 of an anchor of a
// million participants: the others' leaf hashes stand for leaves (only the holder's leaf
// data is hashed here; the tree above is real), and the federation key signs.
func millionReceipt(tb testing.TB) ([]byte, ed25519.PublicKey) {
	tb.Helper()
	const n, holder = 1_000_000, 777_777
	hashes := make([]Hash, n)
	for i := range hashes {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		hashes[i] = sha256.Sum256(b[:])
	}
	leaf := leafAt(holder)
	var err error
	if hashes[holder], err = leaf.Hash(); err != nil {
		tb.Fatal(err)
	}
	tree := FromLeafHashes(hashes)
	proof, err := tree.InclusionProof(holder)
	if err != nil {
		tb.Fatal(err)
	}
	at := protocol.FormatAnchoredAt(time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC))
	hash, err := protocol.MerkleAnchorHash(tree.Root(), n, at)
	if err != nil {
		tb.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	raw, err := protocol.SignReceipt(&protocol.Receipt{AnchorID: "anchor-20261202-001", AnchoredAt: at, CrossAnchorHash: hash,
		AnchorForm: protocol.MerkleForm, Leaf: &leaf, InclusionProof: proof}, key)
	if err != nil {
		tb.Fatal(err)
	}
	return raw, key.Public().(ed25519.PublicKey)
}

// TestMillionReceiptUnder2KB: the receipt of one participant among a million verifies,
// and, written compactly, is under 2 KB before its log leg (issue 36's bound); the
// seed form's would list all million.
func TestMillionReceiptUnder2KB(t *testing.T) {
	raw, pub := millionReceipt(t)
	if _, err := protocol.VerifyReceipt(raw, pub); err != nil {
		t.Fatal(err)
	}
	compact, err := canonical.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(compact) >= 2048 {
		t.Fatalf("the receipt is %d bytes compact, want under 2 KB:\n%s", len(compact), compact)
	}
	t.Logf("%d bytes compact, %d as served (indented)", len(compact), len(raw))
}

// BenchmarkVerifyMillionReceipt verifies that receipt offline, as `cairn federation
// verify` does: parse, the leaf's inclusion among a million, the anchor hash and the
// federation's signature.
func BenchmarkVerifyMillionReceipt(b *testing.B) {
	raw, pub := millionReceipt(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := protocol.VerifyReceipt(raw, pub); err != nil {
			b.Fatal(err)
		}
	}
}
