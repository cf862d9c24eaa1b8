package webhook

import (
	"crypto/ed25519"
	"net/http"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("GET /federation/operator/{id}", Ordered, func() {
	var (
		f  readFederation
		s  *Server
		r  registrant
		id string
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.server()
		r = newRegistrant("Summary Org")
		id = f.register(s, r)
		f.submit(r, id, "sub-1", 0, 5)
		f.submit(r, id, "sub-2", 5, 3)
		f.submit(r, id, "sub-3", 8, 4)
		key := f.signingKey()
		for _, a := range []string{"anchor-20261102-001", "anchor-20261102-002", "anchor-20261102-003"} {
			f.anchor(a, key, id, "op_00000000000000a1")
		}
		f.anchor("anchor-20261102-004", f.signingKey(), "op_00000000000000a1") // another operator's
		_, forger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		f.anchor("anchor-20261102-005", forger, id) // forged, the newest
	})

	firstSeqs := func(a answer) []any {
		var out []any
		for _, sub := range a.body["submissions"].([]any) {
			out = append(out, sub.(map[string]any)["first_seq"])
		}
		return out
	}
	anchorIDs := func(a answer) []any {
		var out []any
		for _, an := range a.body["anchors"].([]any) {
			out = append(out, an.(map[string]any)["anchor_id"])
		}
		return out
	}

	It("answers the seed's summary, accepted submissions and the federation's anchors, newest first", func() {
		a := do(s, http.MethodGet, "/federation/operator/"+id, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		pemText, err := marshalPub(r.key)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.body).To(HaveKeyWithValue("operator_id", id))
		Expect(a.body).To(HaveKeyWithValue("org_name", "Summary Org"))
		Expect(a.body).To(HaveKeyWithValue("public_key_pem", pemText))
		Expect(a.body).To(HaveKeyWithValue("contact_email", "ops@example.org"))
		Expect(a.body).To(HaveKeyWithValue("registered_at", MatchRegexp(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)))
		Expect(a.body).To(HaveKeyWithValue("last_submission_at", MatchRegexp(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)))
		Expect(a.body).To(HaveKeyWithValue("rekor_log_index", BeNumerically(">=", 0)))
		Expect(a.body["rekor_log_index"]).To(Equal(a.body["tlog_log_index"]))
		Expect(a.body).To(HaveKeyWithValue("phase", "Active"))
		Expect(a.body).To(HaveKeyWithValue("status", "active"), "the seed's member")
		Expect(a.body).To(HaveKeyWithValue("next_page_token", BeNil()))
		Expect(firstSeqs(a)).To(Equal([]any{float64(9), float64(6), float64(1)}))
		sub := a.body["submissions"].([]any)[0].(map[string]any)
		Expect(sub).To(HaveKeyWithValue("entry_count", BeNumerically("==", 12)))
		Expect(sub).To(HaveKeyWithValue("last_seq", BeNumerically("==", 12)))
		Expect(sub).To(HaveKeyWithValue("anchor_id", BeNil()))
		Expect(sub).To(HaveKey("submission_id"))
		Expect(sub).To(HaveKey("submitted_at"))
		Expect(anchorIDs(a)).To(Equal([]any{"anchor-20261102-003", "anchor-20261102-002", "anchor-20261102-001"}),
			"the forged anchor and another operator's are not listed")
		an := a.body["anchors"].([]any)[0].(map[string]any)
		Expect(an).To(HaveKeyWithValue("participants", BeNumerically("==", 2)))
		Expect(an).To(HaveKey("cross_anchor_hash"))
		Expect(an).To(HaveKey("chain_signature"))
		Expect(an).To(HaveKey("tlog_log_index"), "the seed's member")

		By("the seed's tlog_log_index of an anchor: the index its log leg verifies at")
		Eventually(func(g Gomega) {
			var ca fv1.CrossAnchor
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: "anchor-20261102-003"}, &ca)).To(Succeed())
			g.Expect(ca.Status.LogEntry).NotTo(BeNil())
			a := do(s, http.MethodGet, "/federation/operator/"+id, nil)
			newest := a.body["anchors"].([]any)[0].(map[string]any)
			g.Expect(newest).To(HaveKeyWithValue("anchor_id", "anchor-20261102-003"))
			g.Expect(newest).To(HaveKeyWithValue("tlog_log_index", BeNumerically("==", ca.Status.LogEntry.LogIndex)))
		}).Should(Succeed())
	})

	It("pages both lists with limit and page_token (or after)", func() {
		a := do(s, http.MethodGet, "/federation/operator/"+id+"?limit=2", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(firstSeqs(a)).To(Equal([]any{float64(9), float64(6)}))
		Expect(anchorIDs(a)).To(Equal([]any{"anchor-20261102-003", "anchor-20261102-002"}))
		tok, _ := a.body["next_page_token"].(string)
		Expect(tok).NotTo(BeEmpty())

		for _, param := range []string{"page_token", "after"} {
			b := do(s, http.MethodGet, "/federation/operator/"+id+"?limit=2&"+param+"="+url.QueryEscape(tok), nil)
			Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
			Expect(firstSeqs(b)).To(Equal([]any{float64(1)}))
			Expect(anchorIDs(b)).To(Equal([]any{"anchor-20261102-001"}))
			Expect(b.body).To(HaveKeyWithValue("next_page_token", BeNil()))
		}

		c := do(s, http.MethodGet, "/federation/operator/"+id+"?limit=1", nil)
		seen := 0
		for {
			Expect(c.status).To(Equal(http.StatusOK), string(c.raw))
			seen += len(c.body["submissions"].([]any))
			tok, _ := c.body["next_page_token"].(string)
			if tok == "" {
				break
			}
			c = do(s, http.MethodGet, "/federation/operator/"+id+"?limit=1&page_token="+url.QueryEscape(tok), nil)
		}
		Expect(seen).To(Equal(3))
	})

	It("answers 400 for a malformed ID, limit or page token", func() {
		for path, code := range map[string]string{
			"/federation/operator/op_34750f98bd59fcf":           "invalid_operator_id",
			"/federation/operator/op_34750F98BD59FCFC":          "invalid_operator_id",
			"/federation/operator/anchor-20261102-001":          "invalid_operator_id",
			"/federation/operator/" + id + "?limit=0":           "invalid_limit",
			"/federation/operator/" + id + "?limit=1001":        "invalid_limit",
			"/federation/operator/" + id + "?limit=x":           "invalid_limit",
			"/federation/operator/" + id + "?page_token=%21%21": "invalid_page_token",
			"/federation/operator/" + id + "?after=bm90IGpzb24": "invalid_page_token",
		} {
			a := do(s, http.MethodGet, path, nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), path)
			Expect(a.body).To(HaveKeyWithValue("error", code), path)
		}
	})

	It("answers 404 operator_not_found for an operator the controller did not register", func() {
		a := do(s, http.MethodGet, "/federation/operator/op_0123456789abcdef", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "operator_not_found"))
	})

	It("answers 404 for an operator the controller rejected, though its object names the ID", func() {
		bad := newRegistrant("Rejected Org")
		pemText, err := marshalPub(bad.key)
		Expect(err).NotTo(HaveOccurred())
		fo := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: "rejected"},
			Spec: fv1.FederationOperatorSpec{OrgName: bad.org, PublicKeyPEM: fv1.PublicKeyPEM(pemText),
				ProofOfPossession: fv1.Signature(proofOf(bad.key, "Another Org"))}}
		Expect(k8sClient.Create(ctx, fo)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(ctx, fo) })
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(fo), fo)).To(Succeed())
			g.Expect(fo.Status.Phase).To(Equal(fv1.PhaseRejected))
		}).Should(Succeed())
		badID := protocol.OperatorID(bad.key.Public().(ed25519.PublicKey))
		a := do(s, http.MethodGet, "/federation/operator/"+badID, nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "operator_not_found"))
	})
})
