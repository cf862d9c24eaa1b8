package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/internal/benchheap"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// merkleLeaves are n leaves ascending by operator_id; salt tells two sets apart.
func merkleLeaves(n int, salt string) []protocol.MerkleLeaf {
	out := make([]protocol.MerkleLeaf, n)
	for i := range out {
		cs := sha256.Sum256(fmt.Appendf(nil, "%s %d", salt, i))
		out[i] = protocol.MerkleLeaf{OperatorID: fmt.Sprintf("op_%016x", i), ChainSignature: hex.EncodeToString(cs[:]), LastSeq: int64(i + 1)}
	}
	return out
}

// TestLeavesRoundTrip: an anchor's leaves come back in tree order and make its tree
// (more than one INSERT batch of them); the leaves a stopped run stored under the same
// ID and another root never mix with them; storing again is a no-op; a gap in the
// indexes is reported as tampering.
func TestLeavesRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		w := newWorld(t)
		s := b.open(t, Options{})
		ls := merkleLeaves(2*leafBatch+17, "honest")
		tree, err := anchortree.Build(ls)
		if err != nil {
			t.Fatal(err)
		}
		stopped := merkleLeaves(5, "a run that stopped before it made its anchor")
		stoppedTree, err := anchortree.Build(stopped)
		if err != nil {
			t.Fatal(err)
		}
		const id = "anchor-20261202-001"
		for _, put := range []struct {
			root   anchortree.Hash
			leaves []protocol.MerkleLeaf
		}{{stoppedTree.Root(), stopped}, {tree.Root(), ls}, {tree.Root(), ls}} {
			if err := s.PutLeaves(ctx, w.fed, id, put.root, put.leaves); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Leaves(ctx, w.fed, id, tree.Root())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := anchortree.Verify(got, uint64(len(ls)), tree.Root()); err != nil {
			t.Errorf("the stored leaves do not make the anchor's tree: %v", err)
		}
		if _, err := s.Leaves(ctx, w.fed, "anchor-20261202-002", tree.Root()); !errors.Is(err, ErrNotFound) {
			t.Errorf("the leaves of an anchor never stored: %v", err)
		}
		if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM cairn_history_leaves WHERE anchor_id = ? AND leaf_index = 7`), id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Leaves(ctx, w.fed, id, tree.Root()); !errors.Is(err, ErrTampered) {
			t.Errorf("leaves with a gap: %v, want ErrTampered", err)
		}
	})
}

// BenchmarkMillionLeafAnchor is the store's part of an anchor run of a million
// participants ("run": the leaves hashed into their tree and stored in SQLite), then of
// the first read of that anchor's tree ("reread": the leaves read back and checked
// against the root, anchortree.Verify). Each reports the peak of the Go heap while it
// ran, the run's including the million leaves it was given.
func BenchmarkMillionLeafAnchor(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	w := newWorld(b)
	s, err := Open(ctx, Options{Driver: SQLite, DSN: b.TempDir() + "/history.db"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() }) //nolint:errcheck // a benchmark's temporary store
	var (
		root anchortree.Hash
		id   string
	)
	b.Run("run", func(b *testing.B) {
		ls := merkleLeaves(n, "bench")
		peak := benchheap.Sample(b)
		b.ResetTimer()
		for i := range b.N {
			tree, err := anchortree.Build(ls)
			if err != nil {
				b.Fatal(err)
			}
			root, id = tree.Root(), fmt.Sprintf("anchor-20261202-%03d", i+1)
			if err := s.PutLeaves(ctx, w.fed, id, root, ls); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		peak()
	})
	b.Run("reread", func(b *testing.B) {
		peak := benchheap.Sample(b)
		b.ResetTimer()
		for range b.N {
			got, err := s.Leaves(ctx, w.fed, id, root)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := anchortree.Verify(got, n, root); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		peak()
	})
}
