package controllers

import (
	"crypto/ed25519"
	"encoding/base64"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// loggedRecord reads entry from fed's log and checks, offline, that it logs record under
// the federation key.
func loggedRecord(fed *fv1.Federation, entry *fv1.LogEntry, record any) {
	GinkgoHelper()
	log, err := suiteLogs.For(ctx, k8sClient, fed)
	Expect(err).NotTo(HaveOccurred())
	e, err := log.Entry(ctx, entry.LogIndex)
	Expect(err).NotTo(HaveOccurred())
	body, err := log.Verify(ctx, &e.Bundle)
	Expect(err).NotTo(HaveOccurred())
	content, err := canonical.Marshal(record)
	Expect(err).NotTo(HaveOccurred())
	Expect(protocol.VerifyHashedRekord(body, content, federationSigningKey(fed).Public().(ed25519.PublicKey))).To(Succeed())
}

var _ = Describe("Operator records", Label("log"), func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("logs registration, key rotation and withdrawal, and enforces each", func() {
		fed := newFederation(ns, nil)
		op := newTestOperator(60, "Rotating Org")
		obj := op.object(ns, "rot")
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.RegistrationLogEntry }, Not(BeNil())))
		st := operatorStatus(ns, "rot")()
		self := fed.Namespace + "/" + fed.Name
		loggedRecord(fed, st.RegistrationLogEntry, protocol.RegistrationRecord{Type: protocol.RecordRegistration, Federation: self,
			OperatorID: string(op.id()), OrgName: op.org, PublicKeyPEM: string(op.pem()), ProofOfPossession: string(obj.Spec.ProofOfPossession)})
		Expect(k8sClient.Create(ctx, op.submission(ns, "s1", op.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "s1")).Should(WithTransform(verdict, Equal(accepted)))

		By("refusing a new key without a rotation both keys signed")
		newOp := testOperator{key: newTestOperator(61, "").key, org: op.org}
		editOperator(ns, "rot", func(o *fv1.FederationOperator) { o.Spec.PublicKeyPEM = newOp.pem() })
		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(reasonOf(fv1.ConditionSignatureVerified), Equal(fv1.ReasonKeyRotationInvalid)))
		Expect(operatorStatus(ns, "rot")().KeyHistory).To(HaveLen(1))

		By("rotating with both signatures")
		rotation, err := protocol.NewKeyRotation(op.key, newOp.key, time.Now())
		Expect(err).NotTo(HaveOccurred())
		editOperator(ns, "rot", func(o *fv1.FederationOperator) {
			o.Spec.PublicKeyPEM = fv1.PublicKeyPEM(rotation.NewPublicKey)
			o.Spec.KeyRotation = &fv1.KeyRotation{RotationAt: fv1.Timestamp(rotation.RotationAt),
				OldKeySignature: fv1.Signature(rotation.OldKeySignature), NewKeySignature: fv1.Signature(rotation.NewKeySignature)}
		})
		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(func(s fv1.FederationOperatorStatus) bool {
			return len(s.KeyHistory) == 2 && s.KeyHistory[1].LogEntry != nil
		}, BeTrue()))
		st = operatorStatus(ns, "rot")()
		Expect(st.OperatorID).To(Equal(op.id()), "the operator keeps its ID")
		Expect(st.KeyHistory[0].ValidUntil).NotTo(BeNil())
		loggedRecord(fed, st.KeyHistory[1].LogEntry, protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: self,
			OperatorID: string(op.id()), OldPublicKeyPEM: string(op.pem()), NewPublicKeyPEM: rotation.NewPublicKey,
			ValidFrom: st.KeyHistory[1].ValidFrom.UTC().Format(time.RFC3339)})

		// The old key no longer signs for the operator; the new one does.
		old := op.submission(ns, "old-key", op.next(10, 5))
		Expect(k8sClient.Create(ctx, old)).To(Succeed())
		Eventually(submissionStatus(ns, "old-key")).Should(WithTransform(verdict, Equal("SignatureVerified=False/SignatureInvalid")))
		deleteRefused(ns, "old-key")
		Expect(k8sClient.Create(ctx, newOp.submissionAs(ns, "new-key", op.id(), op.next(10, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "new-key")).Should(WithTransform(verdict, Equal(accepted)))

		By("withdrawing, signed by the current key")
		w := protocol.NewWithdrawal(newOp.key, time.Now())
		editOperator(ns, "rot", func(o *fv1.FederationOperator) {
			o.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(w.At), Signature: fv1.Signature(signWithdrawal(newOp.key, string(op.id()), w.At))}
		})
		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.WithdrawalLogEntry }, Not(BeNil())))
		Expect(phase(operatorStatus(ns, "rot")())).To(Equal(fv1.PhaseWithdrawn))
		Expect(k8sClient.Create(ctx, newOp.submissionAs(ns, "late", op.id(), op.next(15, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "late")).Should(WithTransform(verdict, Equal("SignatureVerified=False/Withdrawn")))
	})
})

// signWithdrawal signs a withdrawal of operatorID with key: after a rotation the operator
// keeps the ID of its first key, which protocol.NewWithdrawal would not name.
func signWithdrawal(key ed25519.PrivateKey, operatorID, at string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, protocol.WithdrawalMessage(operatorID, at)))
}
