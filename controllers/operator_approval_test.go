package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("Registration under approval", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, func(f *fv1.Federation) { f.Spec.Registration = fv1.RegistrationApproval })
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) []fv1.KeyRecord { return s.KeyHistory }, Not(BeEmpty())))
	})

	It("keeps a kubectl-applied operator Pending and unlogged, accepts none of its submissions, and registers it once GitOps approves it", func() {
		op := newTestOperator(170, "Pending Org")
		obj := op.object(ns, "p")
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, "p")).Should(And(
			WithTransform(phase, Equal(fv1.PhasePending)),
			WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonAwaitingApproval)),
		))
		st := operatorStatus(ns, "p")()
		Expect(st.OperatorID).To(Equal(op.id()))
		Expect(st.RegistrationLogEntry).To(BeNil())
		Expect(st.RegisteredAt).To(BeNil())
		Eventually(func() []string { return eventReasons(ns, "p") }).Should(ContainElement(fv1.ReasonAwaitingApproval))

		By("leaving its submission unjudged while it is Pending")
		Expect(k8sClient.Create(ctx, op.submission(ns, "p-1", op.next(0, 3)))).To(Succeed())
		Consistently(submissionStatus(ns, "p-1"), "2s").Should(WithTransform(verdict, Not(Equal(accepted))))
		Expect(submissionStatus(ns, "p-1")().Ed25519Verified).To(BeFalse())

		By("approving it through spec.approvedOperators")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var f fv1.Federation
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
			f.Spec.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: op.id(), Note: "vetted"}}
			return k8sClient.Update(ctx, &f)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "p")).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.RegistrationLogEntry }, Not(BeNil())))
		st = operatorStatus(ns, "p")()
		Expect(st.Phase).To(Equal(fv1.PhaseActive))
		Expect(st.ApprovedBy).To(Equal([]string{fv1.ApprovalSourceGitOps}))
		Expect(st.RegisteredAt).NotTo(BeNil())
		loggedRecord(fed, st.RegistrationLogEntry, protocol.RegistrationRecord{Type: protocol.RecordRegistration, Federation: fed.Namespace + "/" + fed.Name,
			OperatorID: string(op.id()), OrgName: op.org, PublicKeyPEM: string(op.pem()), ProofOfPossession: string(obj.Spec.ProofOfPossession)})
		Eventually(submissionStatus(ns, "p-1")).Should(WithTransform(verdict, Equal(accepted)))

		By("keeping it registered when the approval is removed")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var f fv1.Federation
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
			f.Spec.ApprovedOperators = nil
			return k8sClient.Update(ctx, &f)
		})).To(Succeed())
		Consistently(operatorStatus(ns, "p"), "1s").Should(WithTransform(phase, Equal(fv1.PhaseActive)))
	})

	It("keeps a Pending operator's key from a later claim", func() {
		op := newTestOperator(171, "First Claim Org")
		Expect(k8sClient.Create(ctx, op.object(ns, "first"))).To(Succeed())
		Eventually(operatorStatus(ns, "first")).Should(WithTransform(phase, Equal(fv1.PhasePending)))
		Expect(k8sClient.Create(ctx, op.object(ns, "second"))).To(Succeed())
		Eventually(operatorStatus(ns, "second")).Should(And(
			WithTransform(phase, Equal(fv1.PhaseRejected)),
			WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonDuplicateKey)),
		))
	})
})
