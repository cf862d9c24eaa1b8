package anchortree

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// leaves returns n well-formed leaves, ascending by operator_id.
func leaves(n int) []protocol.MerkleLeaf {
	out := make([]protocol.MerkleLeaf, n)
	for i := range out {
		out[i] = leafAt(i)
	}
	return out
}

// leafAt is the i-th of those leaves.
func leafAt(i int) protocol.MerkleLeaf {
	cs := sha256.Sum256(fmt.Appendf(nil, "chain %d", i))
	return protocol.MerkleLeaf{OperatorID: fmt.Sprintf("op_%016x", i), ChainSignature: hex.EncodeToString(cs[:]), LastSeq: int64(i + 1)}
}

// TestTreeIsRFC6962: for every size from 1 to 70, and sizes around powers of two up to
// 4,100 (past the size at which levels are hashed in parallel), the root and every
// leaf's proof equal those of github.com/transparency-dev/merkle's reference tree.
func TestTreeIsRFC6962(t *testing.T) {
	sizes := []int{}
	for n := 1; n <= 70; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 127, 128, 129, 1023, 1025, 4095, 4096, 4097, 8193, 9001)
	for _, n := range sizes {
		ls := leaves(n)
		tree, err := Build(ls)
		if err != nil {
			t.Fatal(err)
		}
		ref := testonly.New(rfc6962.DefaultHasher)
		for _, l := range ls {
			ref.AppendData(l.AppendData(nil))
		}
		if root := tree.Root(); !bytes.Equal(root[:], ref.Hash()) || tree.Size() != uint64(n) {
			t.Fatalf("size %d: root %x (size %d), want %x", n, root, tree.Size(), ref.Hash())
		}
		step := max(1, n/37) // every leaf of small trees, a spread of the large ones'
		for i := 0; i < n; i += step {
			got, err := tree.Proof(uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref.InclusionProof(uint64(i), uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("size %d leaf %d: proof of %d hashes, want %d", n, i, len(got), len(want))
			}
			for j := range got {
				if !bytes.Equal(got[j][:], want[j]) {
					t.Fatalf("size %d leaf %d: proof hash %d differs", n, i, j)
				}
			}
			if err := protocol.VerifyMerkleInclusion(ls[i], uint64(i), uint64(n), got, tree.Root()); err != nil {
				t.Fatalf("size %d leaf %d: %v", n, i, err)
			}
		}
	}
}

// TestTreeRFC6962Vectors: the trees of the reference's leaf inputs have its root hashes
// (indexed by size, from the empty tree's).
func TestTreeRFC6962Vectors(t *testing.T) {
	inputs, roots := testonly.LeafInputs(), testonly.RootHashes()
	for n := 1; n <= len(inputs); n++ {
		hashes := make([]Hash, n)
		for i := range hashes {
			hashes[i] = Hash(rfc6962.DefaultHasher.HashLeaf(inputs[i]))
		}
		if root := FromLeafHashes(hashes).Root(); !bytes.Equal(root[:], roots[n]) {
			t.Errorf("size %d: root %x, want %x", n, root, roots[n])
		}
	}
}

// TestBuildRefuses: no leaves, or a malformed leaf (named by its index), makes no tree;
// a proof beyond the tree is an error.
func TestBuildRefuses(t *testing.T) {
	if _, err := Build(nil); !errors.Is(err, protocol.ErrMalformed) {
		t.Errorf("no leaves: %v, want ErrMalformed", err)
	}
	ls := leaves(5000)
	ls[4321].LastSeq = 0
	if _, err := Build(ls); !errors.Is(err, protocol.ErrMalformed) || !bytes.Contains([]byte(err.Error()), []byte("leaf 4321")) {
		t.Errorf("a malformed leaf: %v, want ErrMalformed naming leaf 4321", err)
	}
	tree, err := Build(leaves(3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Proof(3); err == nil {
		t.Error("the proof of leaf 3 of 3 was given")
	}
}
