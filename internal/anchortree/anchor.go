package anchortree

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotTheAnchors means a list of leaves does not make the tree an anchor's signed
// record states: another size, leaves out of order, or another root. The error never
// states the root the leaves gave.
var ErrNotTheAnchors = errors.New("the leaves do not make the anchor's tree")

// Anchor is the checked tree of one Merkle-form anchor: its leaves, in tree order, and
// their tree, whose size and root are the anchor's. It is never changed once made, so any
// number of goroutines may read it.
type Anchor struct {
	leaves []protocol.MerkleLeaf
	tree   *Tree
}

// Verify builds the tree of leaves and returns it when it is the anchor of size leaves
// whose root is root: the leaves' operator IDs strictly ascend (docs/PROTOCOL.md §7) and
// every leaf is of its shape. Otherwise the error wraps ErrNotTheAnchors, or
// protocol.ErrMalformed for a leaf of the wrong shape. The Anchor keeps leaves: the
// caller must not change them afterwards.
func Verify(leaves []protocol.MerkleLeaf, size uint64, root Hash) (*Anchor, error) {
	if uint64(len(leaves)) != size {
		return nil, fmt.Errorf("%w: %d leaves, the anchor has %d", ErrNotTheAnchors, len(leaves), size)
	}
	for i := 1; i < len(leaves); i++ {
		if leaves[i-1].OperatorID >= leaves[i].OperatorID {
			return nil, fmt.Errorf("%w: leaf %d's operator_id does not follow leaf %d's", ErrNotTheAnchors, i, i-1)
		}
	}
	tree, err := Build(leaves)
	if err != nil {
		return nil, err
	}
	if tree.Root() != root {
		return nil, fmt.Errorf("%w: the root of the %d leaves is not the anchor's", ErrNotTheAnchors, size)
	}
	return &Anchor{leaves: leaves, tree: tree}, nil
}

// Of is the Anchor of leaves and tree, which must be Build(leaves): the tree an anchor
// run builds from its own leaves is checked by construction.
func Of(leaves []protocol.MerkleLeaf, tree *Tree) *Anchor { return &Anchor{leaves: leaves, tree: tree} }

// Size is the number of leaves.
func (a *Anchor) Size() uint64 { return a.tree.Size() }

// Leaves are the leaves in tree order: read them, never change them.
func (a *Anchor) Leaves() []protocol.MerkleLeaf { return a.leaves }

// Find returns the index and leaf of operator, if the anchor binds it.
func (a *Anchor) Find(operator string) (uint64, protocol.MerkleLeaf, bool) {
	i, ok := slices.BinarySearchFunc(a.leaves, operator, func(l protocol.MerkleLeaf, id string) int {
		return strings.Compare(l.OperatorID, id)
	})
	if !ok {
		return 0, protocol.MerkleLeaf{}, false
	}
	return uint64(i), a.leaves[i], true
}

// InclusionProof returns the receipt member proving leaf index (Tree.InclusionProof).
func (a *Anchor) InclusionProof(index uint64) (*protocol.LeafInclusionProof, error) {
	return a.tree.InclusionProof(index)
}

// bytes is about what a holds in memory: its leaves and every level of its tree.
func (a *Anchor) bytes() uint64 {
	const perLeaf = uint64(3*16 + 19 + 64 + 8 + 2*len(Hash{})) // string headers, the ID, the signature, last_seq, the tree's share
	return uint64(len(a.leaves)) * perLeaf
}
