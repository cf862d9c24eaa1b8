package controllers

import (
	"crypto"
	"crypto/ed25519"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("A Federation moving to Rekor v2", Label("log"), func() {
	BeforeEach(func() {
		if !onRekorV2() {
			Skip("needs the local Rekor v2 (CAIRN_FEDERATION_LOG=rekor-v2)")
		}
	})

	// from is the log the federation starts on: the embedded log, or the local Rekor v1
	// when make test started it too (REKOR_URL), its key then listed as retired.
	for _, from := range []string{"embedded", "rekor"} {
		It("keeps every earlier receipt's log proof when it moves from the "+from+" log", func() {
			old := fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}
			if from == "rekor" {
				url := os.Getenv("REKOR_URL")
				if url == "" {
					Skip("no local Rekor v1 (REKOR_URL)")
				}
				old = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: url}
			}
			ns := newNamespace()
			threshold := int32(1)
			fed := newFederation(ns, func(f *fv1.Federation) {
				f.Spec.PendingThreshold = &threshold
				f.Spec.TransparencyLog = old
			})
			op := newTestOperator(97, "Migrating Org")
			submitFor(ns, op, "migrating", 5)
			Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
			first := crossAnchors(ns)[0].Name
			Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, first).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
			before := getAnchor(ns, first)
			oldKey := suiteLogKey(currentFederation(fed))
			key := federationSigningKey(fed)

			By("moving to Rekor v2, the old log's key retired")
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var f fv1.Federation
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
				f.Spec.TransparencyLog = rekorV2Log()
				if from == "rekor" {
					pemText, err := federation.LogKeyPEM(oldKey)
					Expect(err).NotTo(HaveOccurred())
					f.Spec.TransparencyLog.RetiredLogs = []fv1.RetiredLog{{PublicKeyPEM: pemText}}
				}
				return k8sClient.Update(ctx, &f)
			})).To(Succeed())
			moved := currentFederation(fed).Generation // the controllers' cache has the new spec once the Federation's status says so
			Eventually(func() int64 { return currentFederation(fed).Status.ObservedGeneration }).Should(BeNumerically(">=", moved))
			Expect(k8sClient.Create(ctx, op.submission(ns, "migrating-2", op.next(5, 3)))).To(Succeed())
			Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
			var second string
			for _, ca := range crossAnchors(ns) {
				if ca.Name != first {
					second = ca.Name
				}
			}
			Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, second).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
			now := getAnchor(ns, second)
			Expect(now.Status.RFC3161Timestamps).NotTo(BeEmpty(), "the new anchor is in Rekor v2")
			verifyReceipts(currentFederation(fed), &now)

			By("the earlier anchor keeps its proof, and its receipt verifies under the old log's key as before")
			Consistently(func() fv1.CrossAnchorStatus { return getAnchor(ns, first).Status }, "3s").Should(Equal(before.Status))
			others, err := federation.OtherLogKeys(ctx, k8sClient, currentFederation(fed))
			Expect(err).NotTo(HaveOccurred())
			Expect(others).To(ContainElement(WithTransform(func(k crypto.PublicKey) bool {
				return k.(interface{ Equal(crypto.PublicKey) bool }).Equal(oldKey)
			}, BeTrue())), "the old log's key is one the federation's receipts verify under")
			raw, err := federation.Receipt(currentFederation(fed), &before, key, oldKey, nil)
			Expect(err).NotTo(HaveOccurred())
			report, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
			Expect(err).NotTo(HaveOccurred())
			Expect(report.Checks[len(report.Checks)-1]).To(And(HaveField("Name", "tlog_entry"), HaveField("OK", true)))
			Expect(report.Receipt.TLogEntry).NotTo(BeNil())
			_, err = federation.Receipt(currentFederation(fed), &before, key, suiteLogKey(currentFederation(fed)), nil)
			Expect(err).To(HaveOccurred(), "the earlier anchor is not in Rekor v2")
		})
	}
})
