package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// shownOrg is the organization name and contact the federation shows of an operator.
func shownOrg(s fv1.FederationOperatorStatus) [2]string {
	org, contact, _ := federation.ShownOrganization(&fv1.FederationOperator{Status: s})
	return [2]string{org, contact}
}

// editOperator applies change to the operator ns/name, retrying on conflicts.
func editOperator(ns, name string, change func(*fv1.FederationOperator)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &fo)).To(Succeed())
		change(&fo)
		return k8sClient.Update(ctx, &fo)
	})).To(Succeed())
}

// signedRename is op's rename to org and contact dated at, as spec.rename holds it.
func signedRename(op testOperator, org, contact string, at time.Time) *fv1.Rename {
	GinkgoHelper()
	rn, err := protocol.NewRename(op.key, string(op.id()), org, contact, at)
	Expect(err).NotTo(HaveOccurred())
	return &fv1.Rename{OrgName: rn.OrgName, Contact: rn.Contact, At: fv1.Timestamp(rn.At), Signature: fv1.Signature(rn.Signature)}
}

var _ = Describe("FederationOperator organization (issue 33)", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
	})

	It("renames nobody on an unsigned edit of spec.orgName or spec.contact, and says so", func() {
		op := newTestOperator(200, "Signed Org")
		Expect(k8sClient.Create(ctx, op.object(ns, "signed"))).To(Succeed())
		Eventually(operatorStatus(ns, "signed")).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.RegistrationLogEntry }, Not(BeNil())))
		Expect(shownOrg(operatorStatus(ns, "signed")())).To(Equal([2]string{"Signed Org", ""}))

		editOperator(ns, "signed", func(fo *fv1.FederationOperator) { fo.Spec.OrgName, fo.Spec.Contact = "Evil Corp", "evil@example.org" })
		Eventually(operatorStatus(ns, "signed")).Should(WithTransform(reasonOf(fv1.ConditionOrganizationVerified), Equal(fv1.ReasonOrganizationUnsigned)))
		Expect(shownOrg(operatorStatus(ns, "signed")())).To(Equal([2]string{"Signed Org", ""}), "the spec's word is not shown")
		Eventually(func() []string { return eventReasons(ns, "signed") }).Should(ContainElement(fv1.ReasonOrganizationUnsigned))
		st := operatorStatus(ns, "signed")()
		loggedRecord(fed, st.RegistrationLogEntry, protocol.RegistrationRecord{Type: protocol.RecordRegistration, Federation: fed.Namespace + "/" + fed.Name,
			OperatorID: string(op.id()), OrgName: "Signed Org", PublicKeyPEM: string(op.pem()), ProofOfPossession: protocol.SignRegistration(op.key, "Signed Org")})
	})

	It("applies a rename the operator signed, logs it, and refuses an older one or another key's", func() {
		op := newTestOperator(201, "Old Name")
		Expect(k8sClient.Create(ctx, op.object(ns, "renamed"))).To(Succeed())
		Eventually(operatorStatus(ns, "renamed")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))

		now := time.Now()
		rn := signedRename(op, "New Name", "security@new.example", now)
		editOperator(ns, "renamed", func(fo *fv1.FederationOperator) { fo.Spec.Rename = rn })
		Eventually(operatorStatus(ns, "renamed")).Should(WithTransform(shownOrg, Equal([2]string{"New Name", "security@new.example"})))
		Expect(reasonOf(fv1.ConditionOrganizationVerified)(operatorStatus(ns, "renamed")())).To(Equal(fv1.ReasonRenamed))
		Eventually(func() []string { return eventReasons(ns, "renamed") }).Should(ContainElement(fv1.ReasonRenamed))
		Expect(newKubectl().run("get", "fo", "-n", ns)).To(ContainSubstring("New Name"), "the Org column is the signed name")
		Eventually(func() *fv1.LogEntry {
			recs := operatorStatus(ns, "renamed")().Organization
			return recs[len(recs)-1].LogEntry
		}).ShouldNot(BeNil())
		recs := operatorStatus(ns, "renamed")().Organization
		Expect(recs).To(HaveLen(2))
		loggedRecord(fed, recs[1].LogEntry, protocol.RenameRecord{Type: protocol.RecordRename, Federation: fed.Namespace + "/" + fed.Name,
			PublicKeyPEM: string(op.pem()), Rename: protocol.Rename{OperatorID: string(op.id()), OrgName: "New Name",
				Contact: "security@new.example", At: string(rn.At), Signature: string(rn.Signature)}})

		By("an older rename, signed before, sent again")
		editOperator(ns, "renamed", func(fo *fv1.FederationOperator) {
			fo.Spec.Rename = signedRename(op, "Old Name Again", "", now.Add(-time.Minute))
		})
		Eventually(operatorStatus(ns, "renamed")).Should(WithTransform(reasonOf(fv1.ConditionOrganizationVerified), Equal(fv1.ReasonRenameInvalid)))
		Expect(shownOrg(operatorStatus(ns, "renamed")())).To(Equal([2]string{"New Name", "security@new.example"}))

		By("a rename another key signed")
		stranger := testOperator{key: newTestOperator(202, "").key}
		forged := signedRename(stranger, "Evil Corp", "", now.Add(time.Minute))
		editOperator(ns, "renamed", func(fo *fv1.FederationOperator) { fo.Spec.Rename = forged })
		Eventually(operatorStatus(ns, "renamed")).Should(WithTransform(func(s fv1.FederationOperatorStatus) int64 {
			var fo fv1.FederationOperator
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "renamed"}, &fo)).To(Succeed())
			return fo.Generation - s.ObservedGeneration
		}, BeZero()))
		st := operatorStatus(ns, "renamed")()
		Expect(reasonOf(fv1.ConditionOrganizationVerified)(st)).To(Equal(fv1.ReasonRenameInvalid))
		Expect(shownOrg(st)).To(Equal([2]string{"New Name", "security@new.example"}))
		Expect(st.Organization).To(HaveLen(2))
	})

	It("signs the contact of a registration that carries a rename, and adopts the signed name of an operator registered before status.organization", func() {
		op := newTestOperator(203, "Contact Org")
		obj := op.object(ns, "contact")
		obj.Spec.Contact = "ops@contact.example"
		obj.Spec.Rename = signedRename(op, "Contact Org", "ops@contact.example", time.Now())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, "contact")).Should(WithTransform(shownOrg, Equal([2]string{"Contact Org", "ops@contact.example"})))
		Eventually(func() *fv1.LogEntry {
			recs := operatorStatus(ns, "contact")().Organization
			return recs[len(recs)-1].LogEntry
		}).ShouldNot(BeNil(), "the registration's rename is logged")

		By("an operator of an earlier release: no status.organization")
		legacy := newTestOperator(204, "Legacy Org")
		Expect(k8sClient.Create(ctx, legacy.object(ns, "legacy"))).To(Succeed())
		Eventually(operatorStatus(ns, "legacy")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, &fo)).To(Succeed())
		fo.Status.Organization = nil
		Expect(k8sClient.Status().Update(ctx, &fo)).To(Succeed())
		Eventually(operatorStatus(ns, "legacy")).Should(WithTransform(shownOrg, Equal([2]string{"Legacy Org", ""})), "the name its proof signs")

		By("one whose spec no longer holds the name its proof signs shows none")
		editOperator(ns, "legacy", func(fo *fv1.FederationOperator) { fo.Spec.OrgName = "Evil Corp" })
		Eventually(operatorStatus(ns, "legacy")).Should(WithTransform(reasonOf(fv1.ConditionOrganizationVerified), Equal(fv1.ReasonOrganizationUnsigned)))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, &fo)).To(Succeed())
		fo.Status.Organization = nil
		Expect(k8sClient.Status().Update(ctx, &fo)).To(Succeed())
		Consistently(operatorStatus(ns, "legacy"), "1s").Should(WithTransform(shownOrg, Equal([2]string{"", ""})))
	})
})
