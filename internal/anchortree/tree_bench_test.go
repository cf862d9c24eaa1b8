package anchortree

import (
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkBuild1M builds the tree of a million leaves (checking and hashing each leaf,
// then every level) and answers one leaf's proof: what one anchor run of a million
// participants spends on its tree. B/op is the tree itself, 64 MiB of hashes.
//
//	go test ./internal/anchortree -run '^$' -bench Build1M -benchmem -benchtime 5x
func BenchmarkBuild1M(b *testing.B) {
	ls := leaves(1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tree, err := Build(ls)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tree.Proof(777_777); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyInclusion1M checks one leaf's inclusion in a tree of a million leaves,
// as an offline receipt check does: the leaf's hash and 20 interior hashes.
func BenchmarkVerifyInclusion1M(b *testing.B) {
	ls := leaves(1_000_000)
	tree, err := Build(ls)
	if err != nil {
		b.Fatal(err)
	}
	path, err := tree.Proof(777_777)
	if err != nil {
		b.Fatal(err)
	}
	root := tree.Root()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := protocol.VerifyMerkleInclusion(ls[777_777], 777_777, tree.Size(), path, root); err != nil {
			b.Fatal(err)
		}
	}
}
