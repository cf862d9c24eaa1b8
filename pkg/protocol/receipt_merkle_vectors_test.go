package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// The Merkle-form receipt vectors (issue 36): a holder's leaf among five participants,
// then every tamper of leaf, proof, size, root, hash and signature, each failing offline,
// and the shapes the form refuses.

// merkleLeaves are the five participants of the vectors' Merkle anchor, ascending by
// operator_id, each at a last_seq of its own.
func merkleLeaves(tb testing.TB) []MerkleLeaf {
	tb.Helper()
	var ls []MerkleLeaf
	for i := range 5 {
		op := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x21 + byte(i)}, ed25519.SeedSize))
		ls = append(ls, MerkleLeaf{OperatorID: OperatorID(op.Public().(ed25519.PublicKey)),
			ChainSignature: ChainSignature(testSecret, fmt.Sprintf("%064x", i+1), int64(i+1)*100), LastSeq: int64(i+1)*100 + 7})
	}
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].OperatorID < ls[j-1].OperatorID; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	return ls
}

// merkleReceipt is the pending receipt of leaves' anchor for the holder of leaf index,
// signed by key: its leaf, its proof from the reference tree, and the anchor hash.
func merkleReceipt(tb testing.TB, key ed25519.PrivateKey, leaves []MerkleLeaf, index int) []byte {
	tb.Helper()
	ref := testonly.New(rfc6962.DefaultHasher)
	for _, l := range leaves {
		ref.AppendData(l.AppendData(nil))
	}
	path, err := ref.InclusionProof(uint64(index), uint64(len(leaves)))
	if err != nil {
		tb.Fatal(err)
	}
	hashes := make([]string, len(path))
	for i, h := range path {
		hashes[i] = base64.StdEncoding.EncodeToString(h)
	}
	at := FormatAnchoredAt(time.Date(2026, 11, 21, 18, 0, 0, 123456789, time.UTC))
	hash, err := MerkleAnchorHash([32]byte(ref.Hash()), uint64(len(leaves)), at)
	if err != nil {
		tb.Fatal(err)
	}
	leaf := leaves[index]
	r := &Receipt{AnchorID: "anchor-20261121-002", AnchoredAt: at, CrossAnchorHash: hash, AnchorForm: MerkleForm, Leaf: &leaf,
		InclusionProof: &LeafInclusionProof{LeafIndex: uint64(index), TreeSize: uint64(len(leaves)), RootHash: base64.StdEncoding.EncodeToString(ref.Hash()), Hashes: hashes}}
	raw, err := SignReceipt(r, key)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// merkleReceiptVectors are the Merkle-form cases, named without the receipt- prefix.
func merkleReceiptVectors(tb testing.TB) map[string]loggedVectorCase {
	tb.Helper()
	leaves := merkleLeaves(tb)
	valid := merkleReceipt(tb, federationKey, leaves, 3)
	edit := func(f func(m map[string]any)) []byte { return editJSON(tb, valid, f) }
	leafOf := func(m map[string]any) map[string]any { return m["leaf"].(map[string]any) }
	proofOf := func(m map[string]any) map[string]any { return m["inclusion_proof"].(map[string]any) }
	hashesOf := func(m map[string]any) []any { return proofOf(m)["hashes"].([]any) }
	// A tree of other leaves that holds the holder's leaf too, hashed and signed by
	// whoever forges it.
	forged := append([]MerkleLeaf{}, leaves...)
	forged[0].LastSeq++
	cases := map[string]loggedVectorCase{
		"valid":    {"the pending receipt of the holder of leaf 3 of a Merkle anchor of five participants", valid, federationKey, "ok", "no_trusted_key"},
		"one-leaf": {"the receipt of a Merkle anchor of one participant: the root is its leaf hash, the proof empty", merkleReceipt(tb, federationKey, leaves[:1], 0), federationKey, "ok", "no_trusted_key"},
		"leaf-last-seq": {"the leaf's last_seq raised by one", edit(func(m map[string]any) { leafOf(m)["last_seq"] = json.Number("408") }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"leaf-operator-id": {"the leaf's operator_id replaced by another participant's", edit(func(m map[string]any) { leafOf(m)["operator_id"] = leaves[0].OperatorID }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"leaf-chain-signature": {"the leaf's chain_signature replaced by another participant's", edit(func(m map[string]any) { leafOf(m)["chain_signature"] = leaves[0].ChainSignature }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"leaf-index": {"leaf_index 2 instead of 3", edit(func(m map[string]any) { proofOf(m)["leaf_index"] = json.Number("2") }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"proof-hash-flipped": {"one character of the proof's second hash changed", edit(func(m map[string]any) { hashesOf(m)[1] = flipBase64Char(hashesOf(m)[1].(string), 0) }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"proof-hash-dropped": {"the proof's last hash left out", edit(func(m map[string]any) { proofOf(m)["hashes"] = hashesOf(m)[:len(hashesOf(m))-1] }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"proof-hash-added": {"a hash added to the proof", edit(func(m map[string]any) { proofOf(m)["hashes"] = append(hashesOf(m), proofOf(m)["root_hash"]) }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"tree-size": {"tree_size 6 instead of 5: leaf 3's proof is the same in both trees, so the anchor hash, which binds the size, fails",
			edit(func(m map[string]any) { proofOf(m)["tree_size"] = json.Number("6") }), federationKey, "mismatch cross_anchor_hash", "mismatch cross_anchor_hash"},
		"root-hash": {"one character of root_hash changed", edit(func(m map[string]any) { proofOf(m)["root_hash"] = flipBase64Char(proofOf(m)["root_hash"].(string), 5) }),
			federationKey, "mismatch inclusion_proof", "mismatch inclusion_proof"},
		"cross-anchor-hash": {"one hex digit of cross_anchor_hash changed", edit(func(m map[string]any) { m["cross_anchor_hash"] = flipHex(m["cross_anchor_hash"].(string)) }),
			federationKey, "mismatch cross_anchor_hash", "mismatch cross_anchor_hash"},
		"forged-tree-not-resigned": {"another tree holding the same leaf, its proof, root and anchor hash all recomputed, under the federation's signature of the first",
			editJSON(tb, merkleReceipt(tb, federationKey, forged, 3), func(m map[string]any) { m["federation_signature"] = decodeObject(tb, valid)["federation_signature"] }),
			federationKey, "signature", "signature"},
		"forged-tree-signed-by-another-key": {"another tree holding the same leaf, recomputed and signed by a key other than the federation's",
			merkleReceipt(tb, otherKey, forged, 3), federationKey, "key_not_trusted", "no_trusted_key"},
		"other-participants-leaf": {"leaf 0's leaf and proof in place of leaf 3's, under the same signature: the signature binds the anchor, the proof the leaf, so this is participant 0's receipt, and verifies",
			editJSON(tb, merkleReceipt(tb, federationKey, leaves, 0), func(m map[string]any) { m["federation_signature"] = decodeObject(tb, valid)["federation_signature"] }),
			federationKey, "ok", "no_trusted_key"},
		"flipped-signature": {"one character of the federation signature changed", edit(func(m map[string]any) {
			m["federation_signature"] = flipBase64Char(m["federation_signature"].(string), 20)
		}), federationKey, "signature", "signature"},
		"without-anchor-form": {"anchor_form removed: without it the receipt is of the seed form, which lists participating_operators",
			edit(func(m map[string]any) { delete(m, "anchor_form") }), federationKey, "malformed", "malformed"},
		"with-participants": {"participating_operators added to a Merkle-form receipt", edit(func(m map[string]any) {
			m["participating_operators"] = []any{map[string]any{"operator_id": leaves[3].OperatorID, "chain_signature": leaves[3].ChainSignature}}
		}), federationKey, "malformed", "malformed"},
		"unknown-form": {"anchor_form merkle-v2, which no version defines", edit(func(m map[string]any) { m["anchor_form"] = "merkle-v2" }),
			federationKey, "malformed", "malformed"},
		"leaf-index-beyond-size": {"leaf_index 5 of a tree of 5", edit(func(m map[string]any) { proofOf(m)["leaf_index"] = json.Number("5") }),
			federationKey, "malformed", "malformed"},
		"tree-size-zero":     {"tree_size 0", edit(func(m map[string]any) { proofOf(m)["tree_size"] = json.Number("0") }), federationKey, "malformed", "malformed"},
		"leaf-extra-member":  {"a member added to the leaf", edit(func(m map[string]any) { leafOf(m)["org_name"] = "Acme" }), federationKey, "malformed", "malformed"},
		"leaf-last-seq-zero": {"the leaf's last_seq 0", edit(func(m map[string]any) { leafOf(m)["last_seq"] = json.Number("0") }), federationKey, "malformed", "malformed"},
		"hashes-null":        {"the proof's hashes null", edit(func(m map[string]any) { proofOf(m)["hashes"] = nil }), federationKey, "malformed", "malformed"},
		"proof-hash-hex": {"a proof hash in hex rather than base64", edit(func(m map[string]any) {
			b, _ := base64.StdEncoding.DecodeString(hashesOf(m)[0].(string))
			hashesOf(m)[0] = hex.EncodeToString(b)
		}), federationKey, "malformed", "malformed"},
		"proof-hash-unpadded": {"a proof hash in base64 without its padding", edit(func(m map[string]any) {
			hashesOf(m)[0] = strings.TrimRight(hashesOf(m)[0].(string), "=")
		}), federationKey, "malformed", "malformed"},
	}
	return cases
}

// TestMerkleReceiptChecks: a Merkle-form receipt runs leaf_inclusion in the place of the
// seed form's participants_order, and reports its leaf.
func TestMerkleReceiptChecks(t *testing.T) {
	rep, err := VerifyReceipt(merkleReceipt(t, federationKey, merkleLeaves(t), 3), federationKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
	}
	if got := fmt.Sprint(names); got != "[parse leaf_inclusion cross_anchor_hash federation_signature trusted_key tlog_entry]" {
		t.Errorf("checks %s", got)
	}
	if r := rep.Receipt; r.AnchorForm != MerkleForm || r.Leaf == nil || r.InclusionProof.TreeSize != 5 || r.ParticipatingOperators != nil {
		t.Errorf("receipt read as %+v", r)
	}
}
