package webhook

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// allChecks are the checks every verification reports.
var allChecks = []string{"pubkey_matches_expected", "signature_verified", "cross_anchor_hash_recomputed", "bound",
	"federation_key_in_history", "tlog_inclusion_verified", "participants_verified",
	"federation_signature_verified", "tlog_entry_present", "tlog_inclusion_proof_valid"}

// seedSigned is the seed's operator_signatures_verified of an answer's checks.
func seedSigned(c map[string]any) []any {
	GinkgoHelper()
	ids, ok := c["operator_signatures_verified"].([]any)
	Expect(ok).To(BeTrue(), "operator_signatures_verified is an array of operator IDs: %v", c["operator_signatures_verified"])
	return ids
}

// checks returns a verification's checks.
func checks(a answer) map[string]any {
	GinkgoHelper()
	c, ok := a.body["checks"].(map[string]any)
	Expect(ok).To(BeTrue(), string(a.raw))
	for _, name := range allChecks {
		Expect(c).To(HaveKeyWithValue(name, BeAssignableToTypeOf(true)), string(a.raw))
	}
	seedSigned(c)
	bools := make(map[string]any, len(allChecks))
	for _, name := range allChecks {
		bools[name] = c[name]
	}
	return bools
}

var _ = Describe("GET /federation/verify/{id}", Ordered, func() {
	var (
		f          readFederation
		s          *Server
		alice, bob registrant
		aliceID    string
		bobID      string
		subA, subB *fv1.Submission
		honest     *fv1.CrossAnchor
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.serverWith(Options{LogDir: logDir})
		alice, bob = newRegistrant("Verify Alice"), newRegistrant("Verify Bob")
		aliceID = f.register(s, alice)
		bobID = f.register(s, bob)
		f.submit(alice, aliceID, "verify-alice-1", 0, 5)
		f.submit(bob, bobID, "verify-bob-1", 0, 9)
		subA, subB = f.submission("verify-alice-1"), f.submission("verify-bob-1")
		honest = logged(f.anchorOver("anchor-20261102-001", f.signingKey(), subA, subB))
	})

	It("reports every check true for an anchor the federation made, logged, over accepted submissions", func() {
		a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-001", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		for name, ok := range checks(a) {
			Expect(ok).To(BeTrue(), name+": "+string(a.raw))
		}
		Expect(seedSigned(a.body["checks"].(map[string]any))).To(ConsistOf(aliceID, bobID), "every participant's signatures verified")
		Expect(a.body).To(HaveKeyWithValue("valid", true))
		Expect(a.body).To(HaveKeyWithValue("reason", BeNil()))
		Expect(a.body).To(HaveKeyWithValue("anchor_id", "anchor-20261102-001"))
		Expect(a.body).To(HaveKeyWithValue("cross_anchor_hash", string(honest.Spec.CrossAnchorHash)))
		Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNumerically("==", honest.Status.LogEntry.LogIndex)))
		Expect(a.body["rekor_log_index"]).To(Equal(a.body["tlog_log_index"]))
		Expect(a.body).To(HaveKeyWithValue("participants", BeNumerically("==", 2)))
		Expect(a.body).To(HaveKeyWithValue("failed_participants", BeEmpty()))
		at, err := protocol.ParseAnchoredAt(a.body["verified_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(BeTemporally("~", time.Now(), time.Minute))
	})

	It("answers 404 anchor_not_found for an unknown anchor and 400 invalid_anchor_id for a malformed one", func() {
		a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-999", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_found"))
		for _, id := range []string{"anchor_20261101T000000Z_9224cd", "anchor-2026110-001", "op_0123456789abcdef", "..%2f..%2fsecret"} {
			a := do(s, http.MethodGet, "/federation/verify/"+id, nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), id)
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_anchor_id"), id)
		}
	})

	Context("an anchor an attacker created", func() {
		It("fails signature_verified for a junk signature", func() {
			ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: "anchor-20261102-002"}}
			ca.Spec = *honest.Spec.DeepCopy()
			ca.Spec.AnchorID = "anchor-20261102-002"
			ca.Spec.FederationSignature = fv1.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64)))
			Expect(k8sClient.Create(ctx, ca)).To(Succeed())
			DeferCleanup(func() { _ = k8sClient.Delete(ctx, ca) })
			Eventually(func(g Gomega) {
				a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-002", nil)
				g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
				c := checks(a)
				g.Expect(c).To(HaveKeyWithValue("signature_verified", false))
				g.Expect(c).To(HaveKeyWithValue("federation_signature_verified", false), "the seed's name of the failing signature")
				g.Expect(c).To(HaveKeyWithValue("tlog_entry_present", false))
				g.Expect(c).To(HaveKeyWithValue("tlog_inclusion_proof_valid", false))
				g.Expect(c).To(HaveKeyWithValue("cross_anchor_hash_recomputed", true), "the hash covers the participants and anchoredAt only")
				g.Expect(c).To(HaveKeyWithValue("tlog_inclusion_verified", false), "the controller never logs a forged anchor")
				g.Expect(a.body).To(HaveKeyWithValue("valid", false))
			}).Should(Succeed())
		})

		It("fails cross_anchor_hash_recomputed for a wrong hash the federation key never signed, and does not state the right one", func() {
			ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: "anchor-20261102-003"}}
			ca.Spec = *honest.Spec.DeepCopy()
			ca.Spec.AnchorID = "anchor-20261102-003"
			signAnchorSpec(ca, f.signingKey())
			right := ca.Spec.CrossAnchorHash
			ca.Spec.CrossAnchorHash = fv1.Hash(strings.Repeat("0", 64))
			Expect(k8sClient.Create(ctx, ca)).To(Succeed())
			DeferCleanup(func() { _ = k8sClient.Delete(ctx, ca) })
			Eventually(func(g Gomega) {
				a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-003", nil)
				g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
				g.Expect(a.body).To(HaveKeyWithValue("valid", false))
				g.Expect(checks(a)).To(HaveKeyWithValue("cross_anchor_hash_recomputed", false))
				g.Expect(string(a.raw)).NotTo(ContainSubstring(string(right)), "the answer states the hash that would have passed")
				g.Expect(a.body).To(HaveKeyWithValue("cross_anchor_hash", strings.Repeat("0", 64)))
			}).Should(Succeed())
		})

		It("fails federation_key_in_history for an anchor signed by a key the federation never held", func() {
			_, forger, err := ed25519.GenerateKey(nil)
			Expect(err).NotTo(HaveOccurred())
			f.anchorOver("anchor-20261102-004", forger, subA, subB)
			a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-004", nil)
			Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			c := checks(a)
			Expect(c).To(HaveKeyWithValue("cross_anchor_hash_recomputed", true))
			Expect(c).To(HaveKeyWithValue("signature_verified", true), "self-consistent")
			Expect(c).To(HaveKeyWithValue("federation_key_in_history", false))
			Expect(c).To(HaveKeyWithValue("federation_signature_verified", false), "signed, but not by the federation")
			Expect(c).To(HaveKeyWithValue("pubkey_matches_expected", false))
			Expect(c).To(HaveKeyWithValue("bound", false))
			Expect(c).To(HaveKeyWithValue("tlog_inclusion_verified", false), "the controller never logs a forged anchor")
			Expect(a.body).To(HaveKeyWithValue("valid", false))
			Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNil()))
			Expect(a.body["reason"]).To(ContainSubstring("key history"))
		})
	})

	It("fails participants_verified for a covered submission whose signed header is not its operator's", func() {
		// The attack: a Submission of Alice's ID whose header a stranger signed, marked
		// accepted in its status, covered by an anchor the federation signed.
		_, stranger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
			ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: 40, FirstSeq: 6, LastSeq: 40,
			FirstPrevHash: string(subA.Spec.LastHMACHash), LastHMACHash: strings.Repeat("4", 64),
			ChainSignature: strings.Repeat("5", 64), EntriesRoot: strings.Repeat("6", 64)}
		signed, err := h.SignedBytes()
		Expect(err).NotTo(HaveOccurred())
		pemText, err := marshalPub(stranger)
		Expect(err).NotTo(HaveOccurred())
		forged := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: "verify-alice-swapped"},
			Spec: fv1.SubmissionSpec{OperatorID: fv1.OperatorID(aliceID), ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
				FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
				ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
				Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(stranger, signed))), PublicKeyPEM: fv1.PublicKeyPEM(pemText)}}
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(ctx, forged) })
		Eventually(func(g Gomega) { // the controller refuses it
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(forged), forged)).To(Succeed())
			g.Expect(meta.FindStatusCondition(forged.Status.Conditions, string(fv1.ConditionSignatureVerified))).NotTo(BeNil())
		}).Should(Succeed())
		ca := logged(f.anchorOver("anchor-20261102-005", f.signingKey(), forged, subB))
		Expect(ca.Status.Phase).To(Equal(fv1.PhaseAnchored))

		Eventually(func(g Gomega) {
			// Forge the status as accepted (again, if the controller put it back), then verify.
			var cur fv1.Submission
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(forged), &cur)).To(Succeed())
			if _, ok := federation.AcceptedAt(&cur); !ok {
				cur.Status.Ed25519Verified, cur.Status.ContinuityVerified = true, true
				for _, t := range []fv1.ConditionType{fv1.ConditionSignatureVerified, fv1.ConditionContinuityVerified, fv1.ConditionReady} {
					meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: string(t), Status: metav1.ConditionTrue,
						Reason: fv1.ReasonVerified, Message: "forged", ObservedGeneration: cur.Generation})
				}
				g.Expect(k8sClient.Status().Update(ctx, &cur)).To(Succeed())
			}
			var cached fv1.Submission
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(forged), &cached)).To(Succeed())
			_, accepted := federation.AcceptedAt(&cached)
			g.Expect(accepted).To(BeTrue(), "the forged status claims acceptance")

			a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-005", nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			c := checks(a)
			g.Expect(c).To(HaveKeyWithValue("participants_verified", false))
			g.Expect(a.body).To(HaveKeyWithValue("failed_participants", ConsistOf(aliceID)), "only Alice's submission is forged")
			g.Expect(seedSigned(a.body["checks"].(map[string]any))).To(ConsistOf(bobID), "Alice's signature did not verify")
			g.Expect(c).To(HaveKeyWithValue("federation_signature_verified", true))
			g.Expect(c).To(HaveKeyWithValue("tlog_inclusion_proof_valid", true))
			g.Expect(c).To(HaveKeyWithValue("signature_verified", true))
			g.Expect(c).To(HaveKeyWithValue("tlog_inclusion_verified", true))
			g.Expect(a.body).To(HaveKeyWithValue("valid", false))
		}).Should(Succeed())
	})

	Context("the log", func() {
		It("fails tlog_inclusion_verified with \"log unreachable\" when this replica reaches no log", func() {
			for _, dir := range []string{"", filepath.Join(GinkgoT().TempDir(), "absent")} {
				a := do(f.serverWith(Options{LogDir: dir}), http.MethodGet, "/federation/verify/anchor-20261102-001", nil)
				Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
				Expect(checks(a)).To(HaveKeyWithValue("tlog_inclusion_verified", false))
				Expect(checks(a)).To(HaveKeyWithValue("tlog_entry_present", false))
				Expect(checks(a)).To(HaveKeyWithValue("tlog_inclusion_proof_valid", false))
				Expect(checks(a)).To(HaveKeyWithValue("signature_verified", true))
				Expect(a.body).To(HaveKeyWithValue("valid", false))
				Expect(a.body["reason"]).To(ContainSubstring("log unreachable"))
				Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNil()))
			}
		})

		It("fails tlog_inclusion_verified when the log, under the same key, lost the entry", func() {
			// A log rebuilt under the federation's log key that holds one other entry: the
			// anchor's index is past its checkpoint.
			var sec corev1.Secret
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: f.key.Name + "-log-key"}, &sec)).To(Succeed())
			root := GinkgoT().TempDir()
			lost, err := tlog.OpenEmbedded(ctx, tlog.EmbeddedOptions{Dir: filepath.Join(root, f.key.Namespace, f.key.Name),
				PrivateKey: string(sec.Data[federation.LogKeySecretKey])})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = lost.Close(ctx) })
			content, err := protocol.CrossAnchorLogContent(strings.Repeat("ab", 32))
			Expect(err).NotTo(HaveOccurred())
			body, err := protocol.NewHashedRekord(content, f.signingKey())
			Expect(err).NotTo(HaveOccurred())
			_, err = lost.Upload(ctx, body)
			Expect(err).NotTo(HaveOccurred())
			Expect(honest.Status.LogEntry.LogIndex).To(BeNumerically(">", 0))

			a := do(f.serverWith(Options{LogDir: root}), http.MethodGet, "/federation/verify/anchor-20261102-001", nil)
			Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			Expect(checks(a)).To(HaveKeyWithValue("tlog_inclusion_verified", false))
			Expect(checks(a)).To(HaveKeyWithValue("tlog_entry_present", false), "the log has no entry there")
			Expect(a.body).To(HaveKeyWithValue("valid", false))
			Expect(a.body["reason"]).To(ContainSubstring("no entry at the anchor's log index"))
		})

		It("fails tlog_inclusion_verified when the anchor's status points at another entry", func() {
			ca := logged(f.anchorOver("anchor-20261102-006", f.signingKey(), subA, subB))
			moved := ca.DeepCopy()
			moved.Status.LogEntry.LogIndex = 0 // the genesis record: a real entry, not this anchor's
			Expect(k8sClient.Status().Update(ctx, moved)).To(Succeed())
			Eventually(func(g Gomega) {
				a := do(s, http.MethodGet, "/federation/verify/anchor-20261102-006", nil)
				g.Expect(checks(a)).To(HaveKeyWithValue("tlog_inclusion_verified", false))
				g.Expect(checks(a)).To(HaveKeyWithValue("tlog_entry_present", true), "an entry is there, another one")
				g.Expect(checks(a)).To(HaveKeyWithValue("tlog_inclusion_proof_valid", false))
				g.Expect(a.body["reason"]).To(ContainSubstring("not this anchor's record"))
				g.Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNil()))
			}).Should(Succeed())
		})
	})

	It("is described in the OpenAPI document", func() {
		a := do(s, http.MethodGet, "/federation/openapi.json", nil)
		var doc map[string]any
		Expect(json.Unmarshal(a.raw, &doc)).To(Succeed())
		Expect(doc["paths"]).To(HaveKey("/federation/verify/{id}"))
	})
})
