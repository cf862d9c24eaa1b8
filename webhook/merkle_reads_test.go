package webhook

import (
	"crypto"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("A Merkle-form anchor through the API", Ordered, func() {
	const id = "anchor-20261105-001"
	var (
		f              readFederation
		s              *Server
		alice, bob     registrant
		aliceID, bobID string
		fedPub         ed25519.PublicKey
		logPub         crypto.PublicKey
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.serverWith(Options{LogDir: logDir, History: suiteHistory})
		alice, bob = newRegistrant("Merkle Alice"), newRegistrant("Merkle Bob")
		aliceID, bobID = f.register(s, alice), f.register(s, bob)
		f.submit(alice, aliceID, "merkle-alice-1", 0, 4)
		f.submit(bob, bobID, "merkle-bob-1", 0, 6)
		key := f.signingKey()
		logged(f.merkleAnchorOver(id, key, f.submission("merkle-alice-1"), f.submission("merkle-bob-1")))
		for _, alias := range []string{"merkle-alice-1", "merkle-bob-1"} {
			Eventually(func() fv1.AnchorID { return f.submission(alias).Status.AnchorRef }).Should(Equal(fv1.AnchorID(id)), alias)
		}
		fedPub, logPub = key.Public().(ed25519.PublicKey), f.logKey()
	})

	It("serves each operator the receipt of its own leaf, logged, naming no other participant", func() {
		for _, who := range []struct {
			r        registrant
			id, peer string
		}{{alice, aliceID, bobID}, {bob, bobID, aliceID}} {
			a := doAuth(s, http.MethodGet, "/receipts", bearer(who.r.key, nil), nil)
			Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			var page struct {
				Receipts []json.RawMessage `json:"receipts"`
			}
			Expect(json.Unmarshal(a.raw, &page)).To(Succeed())
			Expect(page.Receipts).To(HaveLen(1))
			rep, err := protocol.VerifyReceiptWith(page.Receipts[0], protocol.ReceiptVerifyOptions{FederationKey: fedPub, LogKey: logPub})
			Expect(err).NotTo(HaveOccurred(), string(page.Receipts[0]))
			Expect(rep.Receipt.AnchorForm).To(Equal(protocol.MerkleForm))
			Expect(rep.Receipt.Leaf.OperatorID).To(Equal(who.id))
			Expect(rep.Receipt.TLogEntry).NotTo(BeEmpty())
			Expect(string(page.Receipts[0])).NotTo(ContainSubstring(who.peer))
		}
	})

	It("shows the anchor's form and tree, not its participants; the operator's summary lists it with its own chain signature", func() {
		a := do(s, http.MethodGet, "/federation/anchor/"+id, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("anchor_form", "merkle-v1"))
		Expect(a.body).To(HaveKeyWithValue("participants", BeNumerically("==", 2)))
		Expect(a.body).To(HaveKeyWithValue("participating_operators", BeEmpty()))
		Expect(a.body).To(HaveKeyWithValue("tree", HaveKeyWithValue("size", BeNumerically("==", 2))))

		summary := doAuth(s, http.MethodGet, "/federation/operator/"+aliceID, bearer(alice.key, nil), nil)
		Expect(summary.status).To(Equal(http.StatusOK), string(summary.raw))
		Expect(summary.body["anchors"]).To(ContainElement(And(HaveKeyWithValue("anchor_id", id),
			HaveKeyWithValue("chain_signature", string(f.submission("merkle-alice-1").Spec.ChainSignature)))))
	})

	It("verifies live: the tree from the stored leaves, and each participant's submission", func() {
		a := do(s, http.MethodGet, "/federation/verify/"+id, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("valid", true), string(a.raw))
		Expect(a.body["checks"]).To(HaveKeyWithValue("tree_verified", true))
		Expect(seedSigned(a.body["checks"].(map[string]any))).To(ConsistOf(aliceID, bobID))
	})

	It("refuses the receipts and the verdict of a tree whose stored leaf was changed, stating no root", func() {
		db, err := sql.Open("sqlite", filepath.Join(logDir, "history.db"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(db.Close)
		change := func(by int) {
			_, err := db.ExecContext(ctx, `UPDATE cairn_history_leaves SET last_seq = last_seq + ? WHERE anchor_id = ? AND leaf_index = 0`, by, id)
			Expect(err).NotTo(HaveOccurred())
		}
		change(1)
		DeferCleanup(func() { change(-1) })
		fresh := f.serverWith(Options{LogDir: logDir, History: suiteHistory}) // its trees are read anew
		v := do(fresh, http.MethodGet, "/federation/verify/"+id, nil)
		Expect(v.status).To(Equal(http.StatusOK), string(v.raw))
		Expect(v.body).To(HaveKeyWithValue("valid", false))
		Expect(v.body["checks"]).To(HaveKeyWithValue("tree_verified", false))
		Expect(v.body["reason"]).To(ContainSubstring("the stored leaves do not make the tree the anchor states"))
		var ca fv1.CrossAnchor
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: id}, &ca)).To(Succeed())
		for _, h := range regexp.MustCompile(`[0-9a-f]{64}`).FindAllString(string(v.raw), -1) {
			Expect([]string{string(ca.Spec.CrossAnchorHash), string(ca.Spec.Tree.RootHash)}).To(ContainElement(h),
				"the answer states a hash the anchor does not: %s", v.raw)
		}
		r := doAuth(fresh, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
		Expect(r.status).NotTo(Equal(http.StatusOK), "no receipt from leaves that do not make the anchor's tree: %s", r.raw)
	})
})

// merkleAnchorOver signs and creates a Merkle-form CrossAnchor id binding subs, its
// leaves stored in the suite's history store first, as an anchor run does.
func (f readFederation) merkleAnchorOver(id string, key ed25519.PrivateKey, subs ...*fv1.Submission) *fv1.CrossAnchor {
	GinkgoHelper()
	var fed fv1.Federation
	Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
	var leaves []protocol.MerkleLeaf
	for _, sub := range subs {
		leaves = append(leaves, protocol.MerkleLeaf{OperatorID: string(sub.Spec.OperatorID), ChainSignature: string(sub.Spec.ChainSignature), LastSeq: sub.Spec.LastSeq})
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].OperatorID < leaves[j].OperatorID })
	tree, err := anchortree.Build(leaves)
	Expect(err).NotTo(HaveOccurred())
	root := tree.Root()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: id}}
	ca.Spec.AnchorID, ca.Spec.AnchorForm = fv1.AnchorID(id), fv1.AnchorFormMerkle
	ca.Spec.AnchoredAt = "20" + id[9:11] + "-" + id[11:13] + "-" + id[13:15] + "T07:00:00.000000" + id[16:19] + "Z"
	ca.Spec.Tree = &fv1.AnchorTree{Size: int64(tree.Size()), RootHash: fv1.Hash(hex.EncodeToString(root[:]))}
	r := federation.AnchorReceipt(ca)
	r.CrossAnchorHash, err = protocol.MerkleAnchorHash(root, tree.Size(), ca.Spec.AnchoredAt)
	Expect(err).NotTo(HaveOccurred())
	r.Leaf = &leaves[0]
	r.InclusionProof, err = tree.InclusionProof(0)
	Expect(err).NotTo(HaveOccurred())
	_, err = protocol.SignReceipt(&r, key)
	Expect(err).NotTo(HaveOccurred())
	ca.Spec.CrossAnchorHash, ca.Spec.FederationSignature = fv1.Hash(r.CrossAnchorHash), fv1.Signature(r.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(r.FederationPublicKeyPEM)
	Expect(suiteHistory.PutLeaves(ctx, &fed, id, root, leaves)).To(Succeed())
	Expect(k8sClient.Create(ctx, ca)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(ctx, ca) })
	Eventually(func() error { return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &fv1.CrossAnchor{}) }).Should(Succeed())
	return ca
}
