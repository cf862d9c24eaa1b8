package federation

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// merkleAnchor returns a Merkle-form CrossAnchor of n leaves as an anchor run makes it,
// signed by key, its leaves, and a Federation whose key history holds key.
func merkleAnchor(t *testing.T, key ed25519.PrivateKey, n int) (*fv1.Federation, *fv1.CrossAnchor, []protocol.MerkleLeaf) {
	t.Helper()
	leaves := make([]protocol.MerkleLeaf, n)
	for i := range leaves {
		leaves[i] = protocol.MerkleLeaf{OperatorID: fmt.Sprintf("op_%016x", i), ChainSignature: strings.Repeat(fmt.Sprintf("%02x", i), 32), LastSeq: int64(i + 1)}
	}
	tree, err := anchortree.Build(leaves)
	if err != nil {
		t.Fatal(err)
	}
	root := tree.Root()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Name: "anchor-20261202-001", UID: "uid-m", Generation: 1}}
	ca.Spec.AnchorID, ca.Spec.AnchorForm = "anchor-20261202-001", fv1.AnchorFormMerkle
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(time.Date(2026, 12, 2, 18, 0, 0, 1, time.UTC))
	ca.Spec.Tree = &fv1.AnchorTree{Size: int64(n), RootHash: fv1.Hash(hex.EncodeToString(root[:]))}
	r := AnchorReceipt(ca)
	if r.CrossAnchorHash, err = protocol.MerkleAnchorHash(root, uint64(n), r.AnchoredAt); err != nil {
		t.Fatal(err)
	}
	r.Leaf = &leaves[0]
	if r.InclusionProof, err = tree.InclusionProof(0); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.SignReceipt(&r, key); err != nil {
		t.Fatal(err)
	}
	ca.Spec.CrossAnchorHash, ca.Spec.FederationSignature = fv1.Hash(r.CrossAnchorHash), fv1.Signature(r.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(r.FederationPublicKeyPEM)
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Name: "fed", Namespace: "ns", UID: "fed-uid"}}
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: ca.Spec.FederationPublicKeyPEM}}
	return fed, ca, leaves
}

// TestTrustMerkleAnchor plays the forger on a Merkle-form anchor: each change a user
// with create rights could make to a signed one is refused before any leaf is read, and
// the refusal states no recomputed value.
func TestTrustMerkleAnchor(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, signed, _ := merkleAnchor(t, key, 5)
	otherRoot := strings.Repeat("ab", 32)
	for name, c := range map[string]struct {
		change func(*fv1.CrossAnchor)
		want   string
	}{
		"as signed":            {func(*fv1.CrossAnchor) {}, ""},
		"another root":         {func(ca *fv1.CrossAnchor) { ca.Spec.Tree.RootHash = fv1.Hash(otherRoot) }, "does not recompute"},
		"another size":         {func(ca *fv1.CrossAnchor) { ca.Spec.Tree.Size = 6 }, "does not recompute"},
		"no leaves":            {func(ca *fv1.CrossAnchor) { ca.Spec.Tree.Size = 0 }, "no leaves"},
		"an edited anchoredAt": {func(ca *fv1.CrossAnchor) { ca.Spec.AnchoredAt = strings.Replace(ca.Spec.AnchoredAt, "18:", "19:", 1) }, "does not recompute"},
		"participants listed too": {func(ca *fv1.CrossAnchor) {
			ca.Spec.Participants = []fv1.Participant{{OperatorID: "op_0000000000000000", ChainSignature: fv1.Hash(strings.Repeat("00", 32)), LastSeq: 1}}
		}, "lists participants"},
		"the form without a tree": {func(ca *fv1.CrossAnchor) { ca.Spec.Tree = nil }, "not both"},
		"a tree without the form": {func(ca *fv1.CrossAnchor) { ca.Spec.AnchorForm = "" }, "not both"},
		"a root not of hex":       {func(ca *fv1.CrossAnchor) { ca.Spec.Tree.RootHash = fv1.Hash(strings.Repeat("zz", 32)) }, "not 64 hex"},
		"another hash, recomputed from another root, under the old signature": {func(ca *fv1.CrossAnchor) {
			var root anchortree.Hash
			copy(root[:], []byte(otherRoot))
			h, _ := protocol.MerkleAnchorHash(root, 5, ca.Spec.AnchoredAt)
			ca.Spec.Tree.RootHash, ca.Spec.CrossAnchorHash = fv1.Hash(hex.EncodeToString(root[:])), fv1.Hash(h)
		}, "federation_signature"},
	} {
		ca := signed.DeepCopy()
		c.change(ca)
		err := TrustAnchor(fed, ca)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUntrusted saying %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), string(signed.Spec.CrossAnchorHash)) {
			t.Errorf("%s: the error states the signed hash: %v", name, err)
		}
	}
}

// TestMerkleReceiptsShareTheAnchorsSignature: every participant's receipt, made from the
// checked tree, verifies; a Merkle-form anchor's receipt needs a participant; the
// payload every receipt shares is what a key rotation signs.
func TestMerkleReceiptsShareTheAnchorsSignature(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca, leaves := merkleAnchor(t, key, 7)
	root, err := treeRoot(ca)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := anchortree.Verify(leaves, 7, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leaves {
		leaf, ok, err := LeafOf(tree, fv1.OperatorID(l.OperatorID))
		if err != nil || !ok {
			t.Fatalf("LeafOf(%s): %v, %v", l.OperatorID, ok, err)
		}
		raw, err := Receipt(fed, ca, key, nil, leaf)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
		if err != nil || rep.Receipt.Leaf.OperatorID != l.OperatorID {
			t.Errorf("%s's receipt: %v", l.OperatorID, err)
		}
	}
	if _, ok, _ := LeafOf(tree, "op_ffffffffffffffff"); ok {
		t.Error("LeafOf found an operator the anchor does not bind")
	}
	if _, err := Receipt(fed, ca, key, nil, nil); err == nil {
		t.Error("a Merkle-form receipt without a participant was signed")
	}
	r, raw, err := SignReceipt(ca, key, nil, nil)
	if err != nil || raw != nil || r.FederationSignature != string(ca.Spec.FederationSignature) {
		t.Errorf("the shared payload's signature: %v (raw %d bytes), want the anchor's own", err, len(raw))
	}
}
