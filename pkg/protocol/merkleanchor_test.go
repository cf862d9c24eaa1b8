package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// testLeaf is the i-th of a list of well-formed leaves, ascending by operator_id.
func testLeaf(i int) MerkleLeaf {
	cs := sha256.Sum256(fmt.Appendf(nil, "chain %d", i))
	return MerkleLeaf{OperatorID: fmt.Sprintf("op_%016x", i), ChainSignature: hex.EncodeToString(cs[:]), LastSeq: int64(1000*i + 7)}
}

// TestMerkleLeafDataIsCanonicalJSON: the leaf data AppendData writes by hand is what the
// package's RFC 8785 encoder makes of the same three members, for every magnitude of
// last_seq, so a verifier with any RFC 8785 library gets the same bytes.
func TestMerkleLeafDataIsCanonicalJSON(t *testing.T) {
	for _, seq := range []int64{1, 9, 10, 4096, 1<<31 - 1, 1 << 40, maxLastSeq} {
		l := testLeaf(3)
		l.LastSeq = seq
		want, err := canonical.Marshal(map[string]any{"operator_id": l.OperatorID, "chain_signature": l.ChainSignature, "last_seq": seq})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.AppendData(nil); string(got) != string(want) {
			t.Errorf("last_seq %d: leaf data %s, want %s", seq, got, want)
		}
		h, err := l.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if want := rfc6962.DefaultHasher.HashLeaf(want); hex.EncodeToString(h[:]) != hex.EncodeToString(want) {
			t.Errorf("last_seq %d: leaf hash is not RFC 6962's of the leaf data", seq)
		}
	}
}

// TestMerkleLeafShapes: a leaf with any member out of its form is refused before it is
// hashed.
func TestMerkleLeafShapes(t *testing.T) {
	for name, mutate := range map[string]func(*MerkleLeaf){
		"operator_id uppercase":    func(l *MerkleLeaf) { l.OperatorID = "op_00000000000000AB" },
		"operator_id short":        func(l *MerkleLeaf) { l.OperatorID = "op_00" },
		"operator_id with a quote": func(l *MerkleLeaf) { l.OperatorID = `op_000000000000"0ab` },
		"chain_signature short":    func(l *MerkleLeaf) { l.ChainSignature = l.ChainSignature[:62] },
		"chain_signature upper":    func(l *MerkleLeaf) { l.ChainSignature = "A" + l.ChainSignature[1:] },
		"last_seq 0":               func(l *MerkleLeaf) { l.LastSeq = 0 },
		"last_seq negative":        func(l *MerkleLeaf) { l.LastSeq = -5 },
		"last_seq 2^53":            func(l *MerkleLeaf) { l.LastSeq = maxLastSeq + 1 },
	} {
		l := testLeaf(1)
		mutate(&l)
		if _, err := l.Hash(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Hash: %v, want ErrMalformed", name, err)
		}
	}
}

// TestMerkleAnchorHash pins the hash input's form: the domain line, the root in lowercase
// hex, the size in decimal and anchored_at, newline-separated.
func TestMerkleAnchorHash(t *testing.T) {
	var root [32]byte
	for i := range root {
		root[i] = byte(i)
	}
	const at = "2026-11-21T18:00:00.120000000Z"
	got, err := MerkleAnchorHash(root, 1000000, at)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("cairn-merkle-anchor:v1\n000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n1000000\n" + at))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("MerkleAnchorHash = %s, want %s", got, want)
	}
	if other, _ := MerkleAnchorHash(root, 999999, at); other == got {
		t.Error("the size is not bound")
	}
	if _, err := MerkleAnchorHash(root, 0, at); !errors.Is(err, ErrMalformed) {
		t.Errorf("size 0: %v, want ErrMalformed", err)
	}
	if _, err := MerkleAnchorHash(root, 1, "2026-11-21T18:00:00Z"); !errors.Is(err, ErrMalformed) {
		t.Errorf("anchored_at without nanoseconds: %v, want ErrMalformed", err)
	}
}

// TestVerifyMerkleInclusion checks every leaf of trees of 1 to 33 leaves against the
// reference tree of github.com/transparency-dev/merkle, then tampers with each part a
// receipt carries: each fails the inclusion proof or the anchor hash, which binds the
// size (a proof alone fits other sizes too: the rightmost leaves' paths of 32 leaves
// and of 33 are the same).
func TestVerifyMerkleInclusion(t *testing.T) {
	for size := 1; size <= 33; size++ {
		ref := testonly.New(rfc6962.DefaultHasher)
		for i := range size {
			ref.AppendData(testLeaf(i).AppendData(nil))
		}
		root := [32]byte(ref.Hash())
		for i := range size {
			raw, err := ref.InclusionProof(uint64(i), uint64(size))
			if err != nil {
				t.Fatal(err)
			}
			path := make([][32]byte, len(raw))
			for j := range raw {
				path[j] = [32]byte(raw[j])
			}
			if err := VerifyMerkleInclusion(testLeaf(i), uint64(i), uint64(size), path, root); err != nil {
				t.Fatalf("size %d leaf %d: %v", size, i, err)
			}
			for name, tampered := range merkleTampers(testLeaf(i), uint64(i), uint64(size), path, root) {
				if err := tampered(); err == nil {
					t.Errorf("size %d leaf %d: %s verified", size, i, name)
				}
			}
		}
	}
}

// merkleTampers returns, by name, a verification of each way to change one thing a
// receipt of the Merkle form carries for its inclusion: the proof, then the anchor hash
// of the root and size against the one the federation signed.
func merkleTampers(leaf MerkleLeaf, index, size uint64, path [][32]byte, root [32]byte) map[string]func() error {
	const at = "2026-11-21T18:00:00.120000000Z"
	signed, err := MerkleAnchorHash(root, size, at)
	verify := func(l MerkleLeaf, i, n uint64, p [][32]byte, r [32]byte) func() error {
		return func() error {
			if err != nil {
				return err
			}
			if err := VerifyMerkleInclusion(l, i, n, p, r); err != nil {
				return err
			}
			if h, err := MerkleAnchorHash(r, n, at); err != nil || h != signed {
				return errors.Join(errors.New("cross_anchor_hash differs"), err)
			}
			return nil
		}
	}
	other := leaf
	other.LastSeq++
	cs := leaf
	cs.ChainSignature = flipHex(cs.ChainSignature)
	op := leaf
	op.OperatorID = "op_" + flipHex(op.OperatorID[3:])
	badRoot := root
	badRoot[31] ^= 1
	m := map[string]func() error{
		"leaf last_seq":           verify(other, index, size, path, root),
		"leaf chain_signature":    verify(cs, index, size, path, root),
		"leaf operator_id":        verify(op, index, size, path, root),
		"root":                    verify(leaf, index, size, path, badRoot),
		"size + 1":                verify(leaf, index, size+1, path, root),
		"index beyond size":       verify(leaf, size, size, path, root),
		"proof with a hash added": verify(leaf, index, size, append(append([][32]byte{}, path...), root), root),
	}
	if size > 1 {
		m["size - 1"] = verify(leaf, index%(size-1), size-1, path, root)
		m["index + 1"] = verify(leaf, (index+1)%size, size, path, root)
	}
	for j := range path {
		p := append([][32]byte{}, path...)
		p[j][0] ^= 0x80
		m[fmt.Sprintf("proof hash %d", j)] = verify(leaf, index, size, p, root)
		m[fmt.Sprintf("proof without hash %d", j)] = verify(leaf, index, size, append(append([][32]byte{}, path[:j]...), path[j+1:]...), root)
	}
	return m
}
