// Package anchortree builds the RFC 6962 Merkle tree of a Merkle-form cross-anchor's
// leaves (docs/PROTOCOL.md §7, pkg/protocol.MerkleLeaf) and answers its root and each
// leaf's inclusion proof. A tree of a million leaves is built in about a second on two
// cores and holds 64 MiB: every level is kept, so a proof is a lookup per level.
package anchortree

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"runtime"
	"sync"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Hash is one node of the tree.
type Hash = [32]byte

// parallelAbove is the number of hashes of one level past which they are computed on
// every core; below it the goroutines cost more than they save.
const parallelAbove = 4096

// Tree is the RFC 6962 tree over a list of leaves. Its zero value is not usable; Build
// makes one. A Tree is never changed after Build, so any number of goroutines may read it.
type Tree struct {
	// levels[0] holds the leaf hashes; each level above holds the hashes of the pairs of
	// the one below, an unpaired last node carried up unchanged (which is RFC 6962's tree:
	// its left subtrees are the largest powers of two); the last level is the root alone.
	levels [][]Hash
}

// Build checks every leaf and makes their tree, in the order given (a Merkle anchor's
// leaves ascend by operator_id; Build does not sort them). It needs at least one leaf.
// The error wraps protocol.ErrMalformed and names the leaf's index.
func Build(leaves []protocol.MerkleLeaf) (*Tree, error) {
	if len(leaves) == 0 {
		return nil, fmt.Errorf("%w: a tree needs at least one leaf", protocol.ErrMalformed)
	}
	hashes := make([]Hash, len(leaves))
	errs := make([]error, len(leaves))
	inParallel(len(leaves), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			hashes[i], errs[i] = leaves[i].Hash()
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("leaf %d: %w", i, err)
		}
	}
	return FromLeafHashes(hashes), nil
}

// FromLeafHashes makes the tree whose leaf hashes are hashes (at least one), keeping the
// slice as its bottom level: the caller must not change it afterwards.
func FromLeafHashes(hashes []Hash) *Tree {
	t := &Tree{levels: [][]Hash{hashes}}
	for cur := hashes; len(cur) > 1; {
		next := make([]Hash, (len(cur)+1)/2)
		inParallel(len(cur)/2, func(lo, hi int) {
			var buf [1 + 2*len(Hash{})]byte
			buf[0] = 0x01 // RFC 6962's interior node prefix
			for i := lo; i < hi; i++ {
				copy(buf[1:], cur[2*i][:])
				copy(buf[1+len(Hash{}):], cur[2*i+1][:])
				next[i] = sha256.Sum256(buf[:])
			}
		})
		if len(cur)%2 == 1 {
			next[len(next)-1] = cur[len(cur)-1]
		}
		t.levels = append(t.levels, next)
		cur = next
	}
	return t
}

// Size is the number of leaves.
func (t *Tree) Size() uint64 { return uint64(len(t.levels[0])) }

// Root is the tree's root hash.
func (t *Tree) Root() Hash { return t.levels[len(t.levels)-1][0] }

// LeafHash is the hash of leaf index, which must be below Size.
func (t *Tree) LeafHash(index uint64) Hash { return t.levels[0][index] }

// Proof returns the inclusion proof of leaf index (RFC 9162 §2.1.3.1): the sibling of
// its node at every level where it has one, from the leaves up. index must be below
// Size.
func (t *Tree) Proof(index uint64) ([]Hash, error) {
	if index >= t.Size() {
		return nil, fmt.Errorf("leaf %d of a tree of %d", index, t.Size())
	}
	var path []Hash
	for _, level := range t.levels[:len(t.levels)-1] {
		if sibling := index ^ 1; sibling < uint64(len(level)) {
			path = append(path, level[sibling])
		}
		index /= 2
	}
	return path, nil
}

// InclusionProof returns the receipt member that proves leaf index (docs/PROTOCOL.md
// §7): its index, the tree's size and root, and its proof, each hash in padded base64.
func (t *Tree) InclusionProof(index uint64) (*protocol.LeafInclusionProof, error) {
	path, err := t.Proof(index)
	if err != nil {
		return nil, err
	}
	root := t.Root()
	p := &protocol.LeafInclusionProof{LeafIndex: index, TreeSize: t.Size(), RootHash: base64.StdEncoding.EncodeToString(root[:]),
		Hashes: make([]string, len(path))}
	for i, h := range path {
		p.Hashes[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return p, nil
}

// inParallel calls f over [0, n) in one contiguous part per core, or in one call when n
// is small, and returns when every call has.
func inParallel(n int, f func(lo, hi int)) {
	parts := runtime.GOMAXPROCS(0)
	if n <= parallelAbove || parts == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
