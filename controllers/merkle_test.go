package controllers

import (
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("Merkle-form anchors", func() {
	It("bind a run's operators as the leaves of a tree the history store keeps, and serve each its own leaf", func() {
		ns := newNamespace()
		threshold, seedMax := int32(2), int32(0)
		fed := newFederation(ns, func(f *fv1.Federation) {
			f.Spec.PendingThreshold = &threshold
			f.Spec.SeedFormMaxParticipants = &seedMax
		})
		a, b := newTestOperator(101, "Merkle A"), newTestOperator(102, "Merkle B")
		submitFor(ns, a, "merkle-a", 5)
		submitFor(ns, b, "merkle-b", 5)

		By("one anchor of the Merkle form: its tree in the object, its leaves in the history store")
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		first := crossAnchors(ns)[0]
		Expect(first.Spec.AnchorForm).To(Equal(fv1.AnchorFormMerkle))
		Expect(first.Spec.Participants).To(BeEmpty())
		Expect(first.Spec.Tree).To(HaveField("Size", int64(2)))
		Expect(federation.TrustAnchor(currentFederation(fed), &first)).To(Succeed())
		root := rootOf(&first)
		leaves, err := suiteHistory.Leaves(ctx, currentFederation(fed), first.Name, root)
		Expect(err).NotTo(HaveOccurred())
		Expect(leaves).To(HaveLen(2))
		for _, l := range leaves {
			Expect(l.LastSeq).To(Equal(int64(5)))
			Expect([]string{string(a.id()), string(b.id())}).To(ContainElement(l.OperatorID))
		}

		By("its submissions are marked anchored from the tree, and it reaches the log")
		for _, alias := range []string{"merkle-a-1", "merkle-b-1"} {
			Eventually(func() fv1.AnchorID { return submissionStatus(ns, subName(ns, alias))().AnchorRef }).Should(Equal(first.Spec.AnchorID), alias)
		}
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, first.Name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))

		By("each operator's receipt carries its own leaf and proof, verifies offline, and names no other participant")
		anchored := getAnchor(ns, first.Name)
		key, logKey := federationSigningKey(fed), suiteLogKey(fed)
		tree, err := federation.NewMerkleAnchors(suiteHistory).Tree(ctx, currentFederation(fed), &anchored)
		Expect(err).NotTo(HaveOccurred())
		for _, op := range []testOperator{a, b} {
			leaf, ok, err := federation.LeafOf(tree, op.id())
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
			raw, err := federation.Receipt(currentFederation(fed), &anchored, key, logKey, leaf)
			Expect(err).NotTo(HaveOccurred())
			report, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
			Expect(err).NotTo(HaveOccurred(), "%s", raw)
			Expect(report.Receipt.Leaf.OperatorID).To(Equal(string(op.id())))
			Expect(report.Receipt.ParticipatingOperators).To(BeNil())
			other := a
			if op.id() == a.id() {
				other = b
			}
			Expect(string(raw)).NotTo(ContainSubstring(string(other.id())))
		}
		_, err = federation.Receipt(currentFederation(fed), &anchored, key, logKey, nil)
		Expect(err).To(MatchError(ContainSubstring("a participant's")))

		By("the next run binds only what came after: the ledger folded the tree's leaves in")
		Expect(k8sClient.Create(ctx, a.submission(ns, "merkle-a-2", a.next(5, 3)))).To(Succeed())
		Expect(k8sClient.Create(ctx, b.submission(ns, "merkle-b-2", b.next(5, 4)))).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
		second := getAnchor(ns, lastAnchorName(ns, first.Name))
		Expect(second.Spec.Tree).To(HaveField("Size", int64(2)))
		secondLeaves, err := suiteHistory.Leaves(ctx, currentFederation(fed), second.Name, rootOf(&second))
		Expect(err).NotTo(HaveOccurred())
		seqs := map[string]int64{}
		for _, l := range secondLeaves {
			seqs[l.OperatorID] = l.LastSeq
		}
		Expect(seqs).To(Equal(map[string]int64{string(a.id()): 8, string(b.id()): 9}))

		By("a leaf changed in the store: the tree no longer checks, and no receipt or mark comes of it")
		db, err := sql.Open("sqlite", filepath.Join(suiteLogs.Dir, "history.db"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(db.Close)
		_, err = db.ExecContext(ctx, `UPDATE cairn_history_leaves SET last_seq = last_seq + 1 WHERE anchor_id = ? AND leaf_index = 0`, second.Name)
		Expect(err).NotTo(HaveOccurred())
		_, err = federation.NewMerkleAnchors(suiteHistory).Tree(ctx, currentFederation(fed), &second)
		Expect(err).To(MatchError(anchortree.ErrNotTheAnchors))
		Expect(err.Error()).NotTo(ContainSubstring(string(second.Spec.Tree.RootHash)))
	})
})

// rootOf is the tree root ca states.
func rootOf(ca *fv1.CrossAnchor) anchortree.Hash {
	GinkgoHelper()
	b, err := hex.DecodeString(string(ca.Spec.Tree.RootHash))
	Expect(err).NotTo(HaveOccurred())
	return anchortree.Hash(b)
}

// lastAnchorName is the name of ns's anchor other than not.
func lastAnchorName(ns, not string) string {
	GinkgoHelper()
	for _, ca := range crossAnchors(ns) {
		if ca.Name != not {
			return ca.Name
		}
	}
	Fail("no second anchor")
	return ""
}
