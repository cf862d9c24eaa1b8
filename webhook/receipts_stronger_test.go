package webhook

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Issue 33, "Receipts only get stronger": once the federation may have served an
// anchor's logged receipt, it never serves a weaker one (the pending receipt) for it,
// after a move to another log or while it cannot read the log's key.

var _ = Describe("receipts only get stronger on the federation's side (issue 33)", Ordered, ContinueOnFailure, func() {
	var (
		f       readFederation
		s       *Server
		alice   registrant
		aliceID string
		fedPub  ed25519.PublicKey
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.serverWith(Options{LogDir: logDir})
		alice = newRegistrant("Stronger Alice")
		aliceID = f.register(s, alice)
		f.submit(alice, aliceID, "stronger-alice-1", 0, 4)
		sub := f.submission("stronger-alice-1")
		key := f.signingKey()
		fedPub = key.Public().(ed25519.PublicKey)
		logged(f.anchorOver("anchor-20261104-001", key, sub))
		logged(f.anchorOver("anchor-20261104-002", key, sub))
	})

	// receipts fetches Alice's receipts; every one that comes must verify, and none may be
	// weaker than a logged one.
	receipts := func(g Gomega) answer {
		a := doAuth(s, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
		if a.status != http.StatusOK {
			return a
		}
		var page receiptsResponse
		g.Expect(json.Unmarshal(a.raw, &page)).To(Succeed())
		g.Expect(page.Receipts).To(HaveLen(2))
		for _, raw := range page.Receipts {
			rep, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: fedPub})
			g.Expect(err).NotTo(HaveOccurred(), string(raw))
			g.Expect(rep.Receipt.TLogEntry).NotTo(BeEmpty(), "a receipt weaker than the logged one served before: "+string(raw))
		}
		return a
	}

	It("serves logged receipts", func() {
		Eventually(func(g Gomega) { g.Expect(receipts(g).status).To(Equal(http.StatusOK)) }).Should(Succeed())
	})

	It("still serves them logged after a move to Rekor, under the log key that logged them", func() {
		_, rekorKey, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		rekorPEM, err := marshalPub(rekorKey)
		Expect(err).NotTo(HaveOccurred())
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
		fed.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: "http://127.0.0.1:1", PublicKeyPEM: rekorPEM}
		Expect(k8sClient.Update(ctx, &fed)).To(Succeed())
		Eventually(func(g Gomega) {
			var got fv1.Federation
			g.Expect(mgr.GetClient().Get(ctx, f.key, &got)).To(Succeed())
			g.Expect(got.Spec.TransparencyLog.Type).To(Equal(fv1.TransparencyLogRekor))
		}).Should(Succeed())
		a := receipts(Default)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	})

	It("answers 503 rather than a weaker receipt while it cannot read the log key that logged them", func() {
		var sec corev1.Secret
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: federation.LogKeySecretName(&fed)}, &sec)).To(Succeed())
		Expect(k8sClient.Delete(ctx, &sec)).To(Succeed())
		Eventually(func(g Gomega) {
			a := receipts(g)
			g.Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
			g.Expect(a.body).To(HaveKeyWithValue("error", "receipt_log_unverifiable"))
			g.Expect(a.header.Get("Retry-After")).NotTo(BeEmpty())
		}).Should(Succeed())
	})
})
