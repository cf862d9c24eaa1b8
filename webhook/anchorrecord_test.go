package webhook

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

var _ = Describe("GET /federation/anchor/{id}", Ordered, func() {
	var f readFederation
	BeforeAll(func() { f = newReadFederation() })

	It("answers an anchor the federation made with every seed field, and its log entry once logged", func() {
		s := f.server()
		ca := f.anchor("anchor-20261101-001", f.signingKey(), "op_00000000000000b2", "op_00000000000000a1")
		Eventually(func(g Gomega) {
			a := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-001", nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			g.Expect(a.body).To(HaveKeyWithValue("tlog_log_index", Not(BeNil())))
		}).Should(Succeed())

		a := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-001", nil)
		Expect(a.body).To(HaveKeyWithValue("anchor_id", "anchor-20261101-001"))
		Expect(a.body).To(HaveKeyWithValue("cross_anchor_hash", string(ca.Spec.CrossAnchorHash)))
		Expect(a.body).To(HaveKeyWithValue("anchored_at", ca.Spec.AnchoredAt))
		Expect(a.body).To(HaveKeyWithValue("federation_signature", string(ca.Spec.FederationSignature)))
		Expect(a.body).To(HaveKeyWithValue("federation_public_key_pem", string(ca.Spec.FederationPublicKeyPEM)))
		Expect(a.body).To(HaveKeyWithValue("participants", BeNumerically("==", 2)))
		Expect(a.body).To(HaveKeyWithValue("phase", string(fv1.PhaseAnchored)))
		Expect(a.body["rekor_log_index"]).To(Equal(a.body["tlog_log_index"]))
		Expect(a.body).To(HaveKey("rekor_url"))
		Expect(a.body).To(HaveKey("tlog_url"))
		// Both may be null (no public URL configured); compare their printed forms.
		Expect(fmt.Sprint(a.body["rekor_url"])).To(Equal(fmt.Sprint(a.body["tlog_url"])), "rekor_url is tlog_url under the seed's name")
		Expect(a.body["participating_operators"]).To(Equal([]any{
			map[string]any{"operator_id": "op_00000000000000a1", "chain_signature": string(ca.Spec.Participants[0].ChainSignature), "last_seq": float64(7)},
			map[string]any{"operator_id": "op_00000000000000b2", "chain_signature": string(ca.Spec.Participants[1].ChainSignature), "last_seq": float64(7)},
		}))
	})

	It("does not show a log index that the log's proof does not back", func() {
		// The attack: whoever can write the anchor's status moves its log index. Before
		// the API checked the proof, it served the edited index as the federation's.
		s := f.server()
		made := f.anchor("anchor-20261101-004", f.signingKey(), "op_00000000000000a1")
		var ca fv1.CrossAnchor
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(made), &ca)).To(Succeed())
			g.Expect(ca.Status.Phase).To(Equal(fv1.PhaseAnchored))
			a := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-004", nil)
			g.Expect(a.body).To(HaveKeyWithValue("tlog_log_index", Not(BeNil())), "the honest entry is shown")
		}).Should(Succeed())
		ca.Status.LogEntry.LogIndex += 1000
		Expect(k8sClient.Status().Update(ctx, &ca)).To(Succeed())
		Eventually(func(g Gomega) {
			a := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-004", nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			g.Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNil()))
			g.Expect(a.body).To(HaveKeyWithValue("rekor_log_index", BeNil()))
			g.Expect(a.body).To(HaveKeyWithValue("phase", string(fv1.PhasePendingTLog)))
		}).Should(Succeed())
	})

	It("answers 404 anchor_not_found for an unknown anchor", func() {
		a := do(f.server(), http.MethodGet, "/federation/anchor/anchor-20261101-999", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_found"))
	})

	It("answers a forged anchor exactly as an unknown one", func() {
		_, forger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		f.anchor("anchor-20261101-002", forger, "op_00000000000000a1")
		s := f.server()
		forged := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-002", nil)
		unknown := do(s, http.MethodGet, "/federation/anchor/anchor-20261101-003", nil)
		Expect(forged.status).To(Equal(http.StatusNotFound), string(forged.raw))
		Expect(forged.body).To(HaveKeyWithValue("error", "anchor_not_found"))
		Expect(forged.body["message"]).To(Equal(strings.Replace(unknown.body["message"].(string), "-003", "-002", 1)))
		Expect(forged.body).NotTo(HaveKey("anchor_id"))
	})

	It("answers 400 invalid_anchor_id for a malformed ID", func() {
		s := f.server()
		for _, id := range []string{"anchor_20261101T000000Z_9224cd", "anchor-2026110-001", "anchor-20261101-0011", "op_0123456789abcdef", "..%2f..%2fsecret"} {
			a := do(s, http.MethodGet, "/federation/anchor/"+id, nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), id)
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_anchor_id"), id)
		}
	})
})
