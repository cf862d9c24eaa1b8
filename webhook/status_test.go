package webhook

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

var _ = Describe("GET /federation/status", func() {
	It("reports the keys, the operators the controller registered and no anchor before the first", func() {
		s := newServer(Options{})
		Expect(do(s, http.MethodPost, "/federation/register", newRegistrant("Status Org").body(challenge(s))).status).To(Equal(http.StatusOK))
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, fedKey, &fed)).To(Succeed())

		var a answer
		Eventually(func(g Gomega) { // the counts follow the cache's events a moment behind
			a = do(s, http.MethodGet, "/federation/status", nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			g.Expect(a.body["operators_active"]).To(BeNumerically(">=", 1))
		}).Should(Succeed())
		Expect(a.body["federation_public_key"]).To(Equal(string(fed.Status.PublicKeyPEM)))
		Expect(a.body["tlog_public_key"]).To(HavePrefix("-----BEGIN PUBLIC KEY-----"))
		Expect(a.body["operators_active"]).To(BeNumerically(">=", 1))
		Expect(a.body["operators_total"]).To(BeNumerically(">=", a.body["operators_active"]))
		Expect(a.body).To(HaveKeyWithValue("last_anchor", BeNil()))
		Expect(a.body).To(HaveKeyWithValue("submissions_last_24h", BeNumerically("==", 0)))
		Expect(a.body).To(HaveKey("uptime_seconds"))
		Expect(a.body).To(HaveKey("version"))
	})

	It("leaves out a last anchor the federation did not sign", func() {
		s := newServer(Options{})
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, fedKey, &fed)).To(Succeed())
		forged := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fedKey.Namespace, Name: "anchor-20261124-001"},
			Spec: fv1.CrossAnchorSpec{AnchorID: "anchor-20261124-001", AnchoredAt: "2026-11-24T06:00:00.000000000Z",
				CrossAnchorHash:        fv1.Hash(strings.Repeat("ab", 32)),
				Participants:           []fv1.Participant{{OperatorID: "op_0123456789abcdef", ChainSignature: fv1.Hash(strings.Repeat("cd", 32)), LastSeq: 1}},
				FederationSignature:    fv1.Signature(strings.Repeat("A", 86) + "=="),
				FederationPublicKeyPEM: fed.Status.PublicKeyPEM}}
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(ctx, forged) })
		Eventually(func() error { return mgr.GetClient().Get(ctx, objectKey(forged), &fv1.CrossAnchor{}) }).Should(Succeed())

		fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: forged.Spec.AnchorID}
		got, err := s.lastAnchor(ctx, &fed)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeNil(), "a forged anchor was reported as the last anchor")
	})
})

var _ = Describe("GET /federation/openapi.json", func() {
	It("is a valid OpenAPI 3 document that lists every route of the table", func() {
		s := newServer(Options{})
		a := do(s, http.MethodGet, "/federation/openapi.json", nil)
		Expect(a.status).To(Equal(http.StatusOK))
		doc, err := openapi3.NewLoader().LoadFromData(a.raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(doc.Validate(ctx)).To(Succeed())
		routes := s.routes()
		Expect(routes).NotTo(BeEmpty())
		paths := map[string]bool{}
		for _, rt := range routes {
			if rt.page {
				continue // the public page is HTML, not an operation of the API
			}
			paths[rt.path] = true
			item := doc.Paths.Find(rt.path)
			Expect(item).NotTo(BeNil(), rt.path)
			Expect(item.GetOperation(rt.method)).NotTo(BeNil(), rt.method+" "+rt.path)
		}
		var raw map[string]any
		Expect(json.Unmarshal(a.raw, &raw)).To(Succeed())
		Expect(raw["paths"]).To(HaveLen(len(paths)), "the document has a path the route table lacks, or lacks one")
	})
})

func objectKey(o *fv1.CrossAnchor) client.ObjectKey { return client.ObjectKeyFromObject(o) }
