package controllers

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("Receipts", Label("log"), func() {
	It("name the log's key, refuse a status that does not verify, and get a signed entry timestamp back", func() {
		ns := newNamespace()
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		op := newTestOperator(90, "Receipt Org")
		submitFor(ns, op, "receipt", 5)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		name := crossAnchors(ns)[0].Name
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		anchored := getAnchor(ns, name)
		if onRekorV2() {
			Expect(anchored.Status.SignedEntryTimestamp).To(BeEmpty(), "Rekor v2 signs no entry timestamps")
			Expect(anchored.Status.RFC3161Timestamps).To(HaveLen(1), "the timestamp authority's, taken at upload")
		} else {
			Expect(anchored.Status.SignedEntryTimestamp).NotTo(BeEmpty(), "both logs sign entry timestamps")
		}
		key, logKey := federationSigningKey(fed), suiteLogKey(fed)

		By("the receipt signs the log's key and the anchor's key")
		raw, err := federation.Receipt(currentFederation(fed), &anchored, key, logKey, nil)
		Expect(err).NotTo(HaveOccurred())
		report, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
		Expect(err).NotTo(HaveOccurred())
		logPEM, err := federation.LogKeyPEM(logKey)
		Expect(err).NotTo(HaveOccurred())
		Expect(*report.Receipt.TLogPublicKeyPEM).To(Equal(logPEM))
		Expect(*report.Receipt.TLogRecordPublicKeyPEM).To(Equal(string(anchored.Spec.FederationPublicKeyPEM)))

		By("no receipt is signed over a status the log key does not verify, or without the log key")
		edits := map[string]func(ca *fv1.CrossAnchor){
			"an edited log index": func(ca *fv1.CrossAnchor) { ca.Status.LogEntry.LogIndex += 1000 },
			"another root": func(ca *fv1.CrossAnchor) {
				ca.Status.InclusionProof.RootHash = fv1.Hash(protocol.Fingerprint(key.Public().(ed25519.PublicKey)))
			},
		}
		if !onRekorV2() { // the signed entry timestamp covers the integrated time
			edits["an edited integrated time"] = func(ca *fv1.CrossAnchor) {
				ca.Status.LogEntry.IntegratedTime.Time = ca.Status.LogEntry.IntegratedTime.Add(3600e9)
			}
			edits["no signed entry timestamp"] = func(ca *fv1.CrossAnchor) { ca.Status.SignedEntryTimestamp = "" }
		}
		for what, edit := range edits {
			ca := anchored.DeepCopy()
			edit(ca)
			_, err := federation.Receipt(currentFederation(fed), ca, key, logKey, nil)
			Expect(err).To(HaveOccurred(), what)
		}
		_, err = federation.Receipt(currentFederation(fed), &anchored, key, nil, nil)
		Expect(err).To(HaveOccurred(), "no log key")
		_, err = federation.Receipt(currentFederation(fed), &anchored, key, key.Public(), nil)
		Expect(err).To(HaveOccurred(), "another log's key")

		if onRekorV2() {
			By("a timestamp in status is served only when the federation's authority signed it over this entry")
			current := currentFederation(fed)
			Expect(federation.VerifyTimestamps(current, &anchored, logKey)).To(Succeed())
			forged := anchored.DeepCopy()
			raw, err := base64.StdEncoding.DecodeString(forged.Status.RFC3161Timestamps[0])
			Expect(err).NotTo(HaveOccurred())
			raw[len(raw)-5] ^= 1
			forged.Status.RFC3161Timestamps = append(forged.Status.RFC3161Timestamps, base64.StdEncoding.EncodeToString(raw))
			Expect(federation.VerifyTimestamps(current, forged, logKey)).To(MatchError(federation.ErrTimestampUnverified))
			_, err = federation.SigstoreBundle(current, forged, []crypto.PublicKey{logKey})
			Expect(err).To(MatchError(federation.ErrTimestampUnverified))
			return // no entry timestamps to get back
		}
		By("an anchor logged before the embedded log signed entry timestamps gets one back")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var ca fv1.CrossAnchor
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ca)).To(Succeed())
			ca.Status.SignedEntryTimestamp = ""
			return k8sClient.Status().Update(ctx, &ca)
		})).To(Succeed())
		Eventually(func() string { return getAnchor(ns, name).Status.SignedEntryTimestamp }).ShouldNot(BeEmpty())
		refreshed := getAnchor(ns, name)
		Expect(refreshed.Status.Phase).To(Equal(fv1.PhaseAnchored))
		_, err = federation.Receipt(currentFederation(fed), &refreshed, key, logKey, nil)
		Expect(err).NotTo(HaveOccurred())
	})
})
