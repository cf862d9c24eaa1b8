package anchortree

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestVerifyRefusesLeavesThatAreNotTheAnchors: the stored leaves count only when they
// make the tree the anchor's record states. Each tamper of a store, one at a time, is
// refused, and the error never states the root the leaves gave.
func TestVerifyRefusesLeavesThatAreNotTheAnchors(t *testing.T) {
	honest := leaves(9)
	tree, err := Build(honest)
	if err != nil {
		t.Fatal(err)
	}
	root := tree.Root()
	a, err := Verify(honest, 9, root)
	if err != nil {
		t.Fatal(err)
	}
	if i, l, ok := a.Find(honest[4].OperatorID); !ok || i != 4 || l != honest[4] {
		t.Errorf("Find(leaf 4) = %d, %+v, %v", i, l, ok)
	}
	if _, _, ok := a.Find("op_ffffffffffffffff"); ok {
		t.Error("Find found an operator the anchor does not bind")
	}
	p, err := a.InclusionProof(4)
	if err != nil || p.TreeSize != 9 || p.LeafIndex != 4 {
		t.Fatalf("InclusionProof(4) = %+v, %v", p, err)
	}

	edit := func(f func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf) []protocol.MerkleLeaf {
		return f(append([]protocol.MerkleLeaf{}, honest...))
	}
	for name, c := range map[string]struct {
		leaves []protocol.MerkleLeaf
		size   uint64
		want   error
	}{
		"a last_seq raised": {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { ls[3].LastSeq++; return ls }), 9, ErrNotTheAnchors},
		"a chain_signature": {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf {
			ls[8].ChainSignature = ls[7].ChainSignature
			return ls
		}), 9, ErrNotTheAnchors},
		"a leaf dropped":        {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { return append(ls[:2], ls[3:]...) }), 9, ErrNotTheAnchors},
		"a leaf added":          {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { return append(ls, leafAt(9)) }), 9, ErrNotTheAnchors},
		"the size told wrong":   {honest, 8, ErrNotTheAnchors},
		"two leaves swapped":    {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { ls[1], ls[2] = ls[2], ls[1]; return ls }), 9, ErrNotTheAnchors},
		"an operator twice":     {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { ls[5].OperatorID = ls[4].OperatorID; return ls }), 9, ErrNotTheAnchors},
		"a leaf of a bad shape": {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf { ls[0].LastSeq = 0; return ls }), 9, protocol.ErrMalformed},
		"no leaves":             {nil, 0, protocol.ErrMalformed},
		"an operator ID renamed": {edit(func(ls []protocol.MerkleLeaf) []protocol.MerkleLeaf {
			ls[8].OperatorID = "op_ffffffffffffff00"
			return ls
		}), 9, ErrNotTheAnchors},
	} {
		_, err := Verify(c.leaves, c.size, root)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
			continue
		}
		if err != nil && strings.Contains(err.Error(), string(hexOf(root))) {
			t.Errorf("%s: the error states a root: %v", name, err)
		}
	}
}

func hexOf(h Hash) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 64)
	for _, b := range h {
		out = append(out, digits[b>>4], digits[b&15])
	}
	return out
}

// TestCacheBuildsOnce: concurrent Gets of one anchor load and build it once; a second
// anchor evicts the first past the bound; a failed check is kept (one load, not one a
// request); a failed load is not.
func TestCacheBuildsOnce(t *testing.T) {
	ls := leaves(100)
	tree, err := Build(ls)
	if err != nil {
		t.Fatal(err)
	}
	key := Key{Scope: "ns/fed", AnchorID: "anchor-20261202-001", Size: 100, Root: tree.Root()}
	var loads atomic.Int32
	load := func(ctx context.Context) ([]protocol.MerkleLeaf, error) {
		loads.Add(1)
		return append([]protocol.MerkleLeaf{}, ls...), ctx.Err() // a shared build's context never ends (WithoutCancel)
	}
	one := (&Anchor{leaves: ls, tree: tree}).bytes()
	c := NewCache(one + one/2) // room for one such tree
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if a, err := c.Get(context.Background(), key, load); err != nil || a.Size() != 100 {
				t.Errorf("Get: %v", err)
			}
		})
	}
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Errorf("16 concurrent Gets loaded %d times, want once", n)
	}

	other := Key{Scope: "ns/fed", AnchorID: "anchor-20261202-002", Size: 100, Root: tree.Root()}
	if _, err := c.Get(context.Background(), other, load); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), key, load); err != nil || loads.Load() != 3 {
		t.Errorf("after another tree filled the cache, the first was loaded %d times in all, want 3 (evicted): %v", loads.Load(), err)
	}

	wrong := Key{Scope: "ns/fed", AnchorID: "anchor-20261202-003", Size: 100, Root: Hash{1}}
	for range 3 {
		if _, err := c.Get(context.Background(), wrong, load); !errors.Is(err, ErrNotTheAnchors) {
			t.Fatalf("leaves of another root: %v", err)
		}
	}
	if n := loads.Load(); n != 4 {
		t.Errorf("three Gets of leaves that fail their check loaded %d times in all, want 4 (the failure kept)", n)
	}

	down := errors.New("store down")
	failing := func(context.Context) ([]protocol.MerkleLeaf, error) { loads.Add(1); return nil, down }
	fresh := Key{Scope: "ns/fed", AnchorID: "anchor-20261202-004", Size: 100, Root: tree.Root()}
	for range 2 {
		if _, err := c.Get(context.Background(), fresh, failing); !errors.Is(err, down) {
			t.Fatalf("a failing load: %v", err)
		}
	}
	if n := loads.Load(); n != 6 {
		t.Errorf("two Gets with a failing load loaded %d times in all, want 6 (a failed load is not kept)", n)
	}
}

// TestCacheGetEndsWithItsContext: a caller whose context ends stops waiting for a build
// held up by another.
func TestCacheGetEndsWithItsContext(t *testing.T) {
	c := NewCache(1 << 20)
	c.builds <- struct{}{} // another build holds the only slot
	t.Cleanup(func() { <-c.builds })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Get(ctx, Key{AnchorID: "a"}, func(context.Context) ([]protocol.MerkleLeaf, error) { return leaves(1), nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Get with an ended context: %v", err)
	}
}

// TestCacheAddIsNotReadBack: a tree an anchor run added is what Get returns, without a
// load.
func TestCacheAddIsNotReadBack(t *testing.T) {
	ls := leaves(10)
	tree, err := Build(ls)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(1 << 20)
	key := Key{Scope: "ns/fed", AnchorID: "anchor-20261202-001", Size: 10, Root: tree.Root()}
	c.Add(key, Of(ls, tree))
	a, err := c.Get(context.Background(), key, func(context.Context) ([]protocol.MerkleLeaf, error) {
		return nil, errors.New("read back")
	})
	if err != nil || a.Size() != 10 {
		t.Fatalf("Get after Add: %v", err)
	}
}
