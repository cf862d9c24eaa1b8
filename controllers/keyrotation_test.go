package controllers

import (
	"crypto/ed25519"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("Federation key rotation", Label("log"), func() {
	It("logs a record signed by both keys, re-signs recent anchors and signs new ones with the new key", func() {
		ns := newNamespace()
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		op := newTestOperator(80, "Witness Org")
		submitFor(ns, op, "witness", 5)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		first := crossAnchors(ns)[0].Name
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, first).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		oldKey := federationSigningKey(fed)

		By("pointing the Federation at a Secret with a new key")
		newOp := newTestOperator(81, "")
		secret := rotateTo(fed, newOp)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string { return s.SigningKeySecret }, Equal(secret.Name)))
		st := federationStatus(fed)()
		Expect(st.PublicKeyPEM).To(Equal(newOp.pem()))
		Expect(st.KeyHistory).To(HaveLen(2))
		Expect(st.KeyHistory[0].ValidUntil).NotTo(BeNil())
		Expect(conditionReason(fv1.ConditionKeyReady)(st.Conditions)).To(Equal("True/KeyRotated"))

		By("the rotation record is in the log under the old key, with both signatures")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		record, err := rotationRecord(fed, oldKey, newOp.key, secret.CreationTimestamp.UTC())
		Expect(err).NotTo(HaveOccurred())
		loggedRecord(fed, st.KeyHistory[1].LogEntry, record)
		msg := protocol.RotationMessage(record.NewPublicKeyPEM, record.RotatedAt)
		for _, k := range []ed25519.PrivateKey{oldKey, newOp.key} {
			Expect(ed25519.Verify(k.Public().(ed25519.PublicKey), msg, ed25519.Sign(k, msg))).To(BeTrue())
		}

		By("the earlier anchor's receipt verifies under both keys")
		anchored := getAnchor(ns, first)
		Expect(anchored.Status.ReceiptSignatures).To(HaveLen(1))
		Expect(anchored.Spec.FederationPublicKeyPEM).NotTo(Equal(newOp.pem()), "the anchor keeps the key that signed it")
		logKey := suiteLogKey(fed)
		for _, k := range []ed25519.PrivateKey{oldKey, newOp.key} {
			raw, err := federation.Receipt(currentFederation(fed), &anchored, k, logKey, nil)
			Expect(err).NotTo(HaveOccurred())
			// Issue 14, hole 4: the re-signed receipt's log leg verifies too, although
			// the logged record is signed by the old key.
			for _, opts := range []protocol.ReceiptVerifyOptions{{FederationKey: k.Public().(ed25519.PublicKey)},
				{FederationKey: k.Public().(ed25519.PublicKey), LogKey: logKey}} {
				report, err := protocol.VerifyReceiptWith(raw, opts)
				Expect(err).NotTo(HaveOccurred())
				Expect(report.Checks[len(report.Checks)-1]).To(And(HaveField("Name", "tlog_entry"), HaveField("OK", true)))
				Expect(*report.Receipt.TLogRecordPublicKeyPEM).To(Equal(string(anchored.Spec.FederationPublicKeyPEM)))
			}
		}

		By("the next anchor is signed with the new key and logged")
		Expect(k8sClient.Create(ctx, op.submission(ns, "witness-6", op.next(5, 3)))).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
		var second fv1.CrossAnchor
		for _, ca := range crossAnchors(ns) {
			if ca.Name != first {
				second = ca
			}
		}
		Expect(second.Spec.FederationPublicKeyPEM).To(Equal(newOp.pem()))
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, second.Name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		logged := getAnchor(ns, second.Name)
		raw, err := federation.Receipt(currentFederation(fed), &logged, newOp.key, logKey, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = protocol.VerifyReceipt(raw, newOp.pub())
		Expect(err).NotTo(HaveOccurred())
		_, err = federation.Receipt(currentFederation(fed), &logged, oldKey, logKey, nil)
		Expect(err).To(HaveOccurred(), "the old key never signed the new anchor")
	})
})

// rotateTo points fed at a new Secret holding key's private key, which starts a
// federation key rotation, and returns the Secret.
func rotateTo(fed *fv1.Federation, key testOperator) *corev1.Secret {
	GinkgoHelper()
	text, err := protocol.MarshalPrivateKeyPEM(key.key)
	Expect(err).NotTo(HaveOccurred())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: fed.Name + "-signing-key-2"},
		Data: map[string][]byte{federation.SigningKeySecretKey: text}}
	Expect(k8sClient.Create(ctx, secret)).To(Succeed())
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
		fed.Spec.SigningKeySecretRef = &fv1.SecretReference{Name: secret.Name}
		return k8sClient.Update(ctx, fed)
	})).To(Succeed())
	return secret
}
