package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// merkleDocExamples are docs/PROTOCOL.md's worked examples of the Merkle form: the two
// participants of the seed form's example, at the seqs their chain signatures close, and
// a third, in a tree of three leaves hashed step by step; then the receipt of the first
// participant, signed by fedKey.
func merkleDocExamples(tb testing.TB, ps []Participant, seqs map[string]int64, at string, fedKey ed25519.PrivateKey) []docExample {
	tb.Helper()
	third := MerkleLeaf{OperatorID: "op_c0ffee00c0ffee00", ChainSignature: strings.Repeat("c0", 32), LastSeq: 1200}
	leaves := []MerkleLeaf{}
	for _, p := range ps {
		leaves = append(leaves, MerkleLeaf{OperatorID: p.OperatorID, ChainSignature: p.ChainSignature, LastSeq: seqs[p.OperatorID]})
	}
	leaves = append(leaves, third) // "op_c" sorts after both
	node := func(l, r [32]byte) [32]byte { return sha256.Sum256(append(append([]byte{0x01}, l[:]...), r[:]...)) }
	var hashes [3][32]byte
	var rows [][2]string
	for i, l := range leaves {
		var err error
		if hashes[i], err = l.Hash(); err != nil {
			tb.Fatal(err)
		}
		n := string(rune('0' + i))
		rows = append(rows, [2]string{"leaf_data " + n, string(l.AppendData(nil))}, [2]string{"leaf_hash " + n, hex.EncodeToString(hashes[i][:])})
	}
	left := node(hashes[0], hashes[1])
	root := node(left, hashes[2])
	hash, err := MerkleAnchorHash(root, 3, at)
	if err != nil {
		tb.Fatal(err)
	}
	rows = append(rows,
		[2]string{"node 0..1", hex.EncodeToString(left[:])},
		[2]string{"root_hash", hex.EncodeToString(root[:])},
		[2]string{"anchored_at", at},
		[2]string{"hash_input", "cairn-merkle-anchor:v1\n" + hex.EncodeToString(root[:]) + "\n3\n" + at},
		[2]string{"cross_anchor_hash", hash},
	)
	r := &Receipt{AnchorID: "anchor-20261121-002", AnchoredAt: at, CrossAnchorHash: hash, AnchorForm: MerkleForm, Leaf: &leaves[0],
		InclusionProof: &LeafInclusionProof{LeafIndex: 0, TreeSize: 3, RootHash: base64.StdEncoding.EncodeToString(root[:]),
			Hashes: []string{base64.StdEncoding.EncodeToString(hashes[1][:]), base64.StdEncoding.EncodeToString(hashes[2][:])}}}
	signed, err := SignReceipt(r, fedKey)
	if err != nil {
		tb.Fatal(err)
	}
	payload, err := ReceiptPayload(signed)
	if err != nil {
		tb.Fatal(err)
	}
	receipt, err := canonical.Transform(signed)
	if err != nil {
		tb.Fatal(err)
	}
	return []docExample{
		{"merkle-anchor", rows},
		{"merkle-receipt", [][2]string{{"payload", string(payload)}, {"receipt", string(receipt)}}},
	}
}

// checkMerkleExamples checks the page's Merkle-form examples from their rows alone, with
// SHA-256 and Ed25519 as a verifier written from the page would: each leaf hash, the
// interior node, the root, the hash input and cross_anchor_hash, then the receipt (under
// the seed example's federation key) and its payload.
func checkMerkleExamples(t *testing.T, ma, mr map[string]string, fedPub ed25519.PublicKey, want func(string, string, string), ok func(string, error)) {
	t.Helper()
	hexSum := func(parts ...[]byte) string {
		h := sha256.New()
		for _, p := range parts {
			h.Write(p)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	for _, n := range []string{"0", "1", "2"} {
		want("merkle-anchor leaf_hash "+n, hexSum([]byte{0x00}, []byte(ma["leaf_data "+n])), ma["leaf_hash "+n])
		var l MerkleLeaf
		ok("merkle-anchor leaf_data "+n, json.Unmarshal([]byte(ma["leaf_data "+n]), &l))
		want("merkle-anchor leaf_data "+n+" is RFC 8785", string(l.AppendData(nil)), ma["leaf_data "+n])
	}
	want("merkle-anchor node 0..1", hexSum([]byte{0x01}, mustHex(t, ma["leaf_hash 0"]), mustHex(t, ma["leaf_hash 1"])), ma["node 0..1"])
	want("merkle-anchor root_hash", hexSum([]byte{0x01}, mustHex(t, ma["node 0..1"]), mustHex(t, ma["leaf_hash 2"])), ma["root_hash"])
	want("merkle-anchor hash_input", "cairn-merkle-anchor:v1\\n"+ma["root_hash"]+"\\n3\\n"+ma["anchored_at"], ma["hash_input"])
	want("merkle-anchor cross_anchor_hash", hexSum([]byte(raw(ma["hash_input"]))), ma["cross_anchor_hash"])
	rep, err := VerifyReceipt([]byte(mr["receipt"]), fedPub)
	ok("merkle-receipt", err)
	if err == nil {
		want("merkle-receipt cross_anchor_hash", rep.Receipt.CrossAnchorHash, ma["cross_anchor_hash"])
		want("merkle-receipt leaf", string(rep.Receipt.Leaf.AppendData(nil)), ma["leaf_data 0"])
	}
	payload, err := ReceiptPayload([]byte(mr["receipt"]))
	ok("merkle-receipt payload", err)
	want("merkle-receipt payload", string(payload), mr["payload"])
}
