package federation

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the Merkle form of a CrossAnchor (docs/PROTOCOL.md §7): the anchor states
// its tree's size and root, and its leaves, one a participant, are in the history store.
// A leaf counts only as part of a tree that gives the anchor's root (MerkleAnchors.Tree);
// the anchor's hash and signature are checked as the seed form's are.

// MerkleIndexKey is the ParticipantIndex value of every Merkle-form CrossAnchor, whose
// participants are not in the object: no operator ID has this form.
const MerkleIndexKey = string(fv1.AnchorFormMerkle)

// DefaultSeedFormMaxParticipants is how many operators a run binds in the seed form when
// the Federation does not say: as many as one seed-form anchor holds, so that a
// federation that never made a Merkle-form anchor goes on serving seed receipts below it.
const DefaultSeedFormMaxParticipants = MaxParticipantsPerAnchor

// SeedFormMaxParticipants is how many operators one of fed's runs binds at most in the
// seed form (FederationSpec.SeedFormMaxParticipants).
func SeedFormMaxParticipants(fed *fv1.Federation) int {
	if n := fed.Spec.SeedFormMaxParticipants; n != nil {
		return int(*n)
	}
	return DefaultSeedFormMaxParticipants
}

// IsMerkle reports whether ca is of the Merkle form.
func IsMerkle(ca *fv1.CrossAnchor) bool { return ca.Spec.AnchorForm == fv1.AnchorFormMerkle }

// ParticipantCount is how many operators ca binds.
func ParticipantCount(ca *fv1.CrossAnchor) int {
	if IsMerkle(ca) && ca.Spec.Tree != nil {
		return int(ca.Spec.Tree.Size)
	}
	return len(ca.Spec.Participants)
}

// merkleHashError is anchorHashError for the Merkle form: anchorForm is merkle-v1, the
// tree is stated (size from 1 to 2^53−1, a root of 64 hex), no participant is listed,
// and crossAnchorHash recomputes from the root, the size and anchoredAt.
func merkleHashError(ca *fv1.CrossAnchor) error {
	t := ca.Spec.Tree
	switch {
	case !IsMerkle(ca) || t == nil:
		return fmt.Errorf("%w: CrossAnchor %s has an anchorForm or a tree, not both", ErrUntrusted, ca.Name)
	case len(ca.Spec.Participants) > 0:
		return fmt.Errorf("%w: CrossAnchor %s of the Merkle form lists participants", ErrUntrusted, ca.Name)
	case t.Size < 1:
		return fmt.Errorf("%w: CrossAnchor %s: its tree has no leaves", ErrUntrusted, ca.Name)
	}
	root, err := treeRoot(ca)
	if err != nil {
		return err
	}
	want, err := protocol.MerkleAnchorHash(root, uint64(t.Size), ca.Spec.AnchoredAt)
	if err != nil {
		return fmt.Errorf("%w: CrossAnchor %s: tree or anchoredAt: %w", ErrUntrusted, ca.Name, err)
	}
	if want != string(ca.Spec.CrossAnchorHash) {
		return fmt.Errorf("%w: CrossAnchor %s: cross_anchor_hash mismatch: its crossAnchorHash does not recompute from its tree's root, its size and anchoredAt", ErrUntrusted, ca.Name)
	}
	return nil
}

// treeRoot is the root ca states, decoded.
func treeRoot(ca *fv1.CrossAnchor) (anchortree.Hash, error) {
	var root anchortree.Hash
	b, err := hex.DecodeString(string(ca.Spec.Tree.RootHash))
	if err != nil || len(b) != len(root) {
		return root, fmt.Errorf("%w: CrossAnchor %s: tree.rootHash is not 64 hex characters", ErrUntrusted, ca.Name)
	}
	copy(root[:], b)
	return root, nil
}

// LeafStore is where Merkle-form anchors' leaves are kept (the history store).
type LeafStore interface {
	// PutLeaves stores the leaves, in tree order, of fed's anchor anchorID of root.
	PutLeaves(ctx context.Context, fed *fv1.Federation, anchorID string, root [32]byte, leaves []protocol.MerkleLeaf) error
	// Leaves returns them, unchecked.
	Leaves(ctx context.Context, fed *fv1.Federation, anchorID string, root [32]byte) ([]protocol.MerkleLeaf, error)
}

// ErrNoLeafStore means a Merkle-form anchor was met where no history store is configured.
var ErrNoLeafStore = errors.New("a Merkle-form anchor's leaves are in the history store, and none is configured")

// MerkleAnchors reads the trees of Merkle-form anchors: their leaves from Store, checked
// against the root each anchor states and kept in Cache. A nil *MerkleAnchors has no
// store: every Tree fails with ErrNoLeafStore.
type MerkleAnchors struct {
	Store LeafStore
	Cache *anchortree.Cache
}

// DefaultTreeCacheBytes bounds the trees a MerkleAnchors keeps: two of a million leaves.
const DefaultTreeCacheBytes = 400 << 20

// NewMerkleAnchors reads leaves from store (nil: no history store) and keeps at most
// DefaultTreeCacheBytes of trees.
func NewMerkleAnchors(store LeafStore) *MerkleAnchors {
	if store == nil {
		return nil
	}
	return &MerkleAnchors{Store: store, Cache: anchortree.NewCache(DefaultTreeCacheBytes)}
}

// Tree returns the checked tree of fed's Merkle-form anchor ca, which the caller has
// verified (Trust.Verify): its stored leaves, which must make the tree whose size and
// root ca states (an error wrapping anchortree.ErrNotTheAnchors otherwise).
func (m *MerkleAnchors) Tree(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor) (*anchortree.Anchor, error) {
	if m == nil {
		return nil, fmt.Errorf("anchor %s: %w", ca.Name, ErrNoLeafStore)
	}
	if !IsMerkle(ca) || ca.Spec.Tree == nil {
		return nil, fmt.Errorf("anchor %s is of the seed form", ca.Name)
	}
	key, err := treeKey(fed, ca)
	if err != nil {
		return nil, err
	}
	a, err := m.Cache.Get(ctx, key, func(ctx context.Context) ([]protocol.MerkleLeaf, error) {
		return m.Store.Leaves(ctx, fed, ca.Name, key.Root)
	})
	if err != nil {
		return nil, fmt.Errorf("the leaves of anchor %s: %w", ca.Name, err)
	}
	return a, nil
}

// Remember keeps tree as the checked tree of fed's Merkle-form anchor ca, which the
// caller made from tree's own leaves (an anchor run), so that readers in this process do
// not read them back.
func (m *MerkleAnchors) Remember(fed *fv1.Federation, ca *fv1.CrossAnchor, tree *anchortree.Anchor) {
	if key, err := treeKey(fed, ca); m != nil && err == nil {
		m.Cache.Add(key, tree)
	}
}

// treeKey names ca's tree in the cache: fed, ca's name and the size and root it states.
func treeKey(fed *fv1.Federation, ca *fv1.CrossAnchor) (anchortree.Key, error) {
	root, err := treeRoot(ca)
	if err != nil {
		return anchortree.Key{}, err
	}
	return anchortree.Key{Scope: fed.Namespace + "/" + fed.Name + "/" + string(fed.UID), AnchorID: ca.Name, Size: uint64(ca.Spec.Tree.Size), Root: root}, nil
}

// ParticipantIn returns operator's participant entry in fed's anchor ca, which the
// caller has verified, and whether ca binds it: from ca in the seed form, from its
// checked tree in the Merkle form.
func (m *MerkleAnchors) ParticipantIn(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, operator fv1.OperatorID) (fv1.Participant, bool, error) {
	if !IsMerkle(ca) {
		p, ok := ParticipantOf(ca, operator)
		return p, ok, nil
	}
	tree, err := m.Tree(ctx, fed, ca)
	if err != nil {
		return fv1.Participant{}, false, err
	}
	_, l, ok := tree.Find(string(operator))
	return ParticipantOfLeaf(l), ok, nil
}

// ParticipantOfLeaf is the Participant a Merkle-form anchor's leaf l binds.
func ParticipantOfLeaf(l protocol.MerkleLeaf) fv1.Participant {
	return fv1.Participant{OperatorID: fv1.OperatorID(l.OperatorID), ChainSignature: fv1.Hash(l.ChainSignature), LastSeq: l.LastSeq}
}

// MerkleLeaves are ps as the leaves of a Merkle-form anchor.
func MerkleLeaves(ps []fv1.Participant) []protocol.MerkleLeaf {
	leaves := make([]protocol.MerkleLeaf, len(ps))
	for i, p := range ps {
		leaves[i] = protocol.MerkleLeaf{OperatorID: string(p.OperatorID), ChainSignature: string(p.ChainSignature), LastSeq: p.LastSeq}
	}
	return leaves
}
