package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
)

// The refusals of config/admission's policy, word for word.
const (
	refusedCrossAnchor = "only the federation manager (" + admission.ManagerUsername +
		") creates CrossAnchors: they are records the federation signs"
	refusedSubmission = "only the federation manager (" + admission.ManagerUsername +
		") creates Submissions: they record exports the federation verified"
)

func refusedStatus(kinds string) string {
	return "only the federation manager (" + admission.ManagerUsername + ") writes the status of " +
		kinds + ": status is the controller's memory, not evidence"
}

// federationKinds are the federation's resources and their status subresources.
var federationKinds = []string{"federations", "federationoperators", "submissions", "crossanchors",
	"federations/status", "federationoperators/status", "submissions/status", "crossanchors/status"}

// namespaceUser lets user do anything with the federation's kinds and their status in ns,
// as a namespace owner would, and returns a client acting as user: the administrator,
// impersonating. It returns once RBAC lets user in, so that any refusal is the policy's.
func namespaceUser(ns, user string) client.Client {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "federation-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{fv1.GroupVersion.Group}, Resources: federationKinds, Verbs: []string{"*"}}}}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "federation-editor-" + user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
	Expect(k8sClient.Create(ctx, binding)).To(Succeed())

	userCfg := rest.CopyConfig(adminCfg)
	userCfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(userCfg, client.Options{Scheme: newScheme()})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) bool {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create",
				Group: fv1.GroupVersion.Group, Resource: "crossanchors"}}}
		g.Expect(c.Create(ctx, review)).To(Succeed())
		return review.Status.Allowed
	}).Should(BeTrue(), "RBAC lets %s create CrossAnchors in %s", user, ns)
	return c
}

// inNamespace puts obj in ns.
func inNamespace[T client.Object](ns string, obj T) T {
	obj.SetNamespace(ns)
	return obj
}

// expectRefused requires err to be the policy's refusal with message want.
func expectRefused(err error, want string) {
	GinkgoHelper()
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want the admission policy's refusal, got %v", err)
	Expect(err.Error()).To(ContainSubstring("denied request: " + want))
}

var _ = Describe("The admission policy (config/admission)", func() {
	var ns string
	var alice client.Client
	BeforeEach(func() {
		ns = newNamespace()
		alice = namespaceUser(ns, "alice")
	})

	It("refuses a namespace user's CrossAnchor and Submission, naming the rule", func() {
		expectRefused(alice.Create(ctx, inNamespace(ns, sampleCrossAnchor())), refusedCrossAnchor)
		expectRefused(alice.Create(ctx, inNamespace(ns, sampleSubmission())), refusedSubmission)
	})

	It("lets a namespace user register an operator and configure a federation, not write status", func() {
		fed := inNamespace(ns, sampleFederation())
		Expect(alice.Create(ctx, fed)).To(Succeed())
		fo := inNamespace(ns, sampleOperator())
		Expect(alice.Create(ctx, fo)).To(Succeed())
		sub := inNamespace(ns, sampleSubmission())
		Expect(k8sClient.Create(ctx, sub)).To(Succeed())
		xa := inNamespace(ns, sampleCrossAnchor())
		Expect(k8sClient.Create(ctx, xa)).To(Succeed())

		// Merge patches carry no resourceVersion, so the controllers' own writes cannot
		// turn a refusal into a conflict.
		before := fed.DeepCopy()
		fed.Status.KeyHistory = append(fed.Status.KeyHistory, fv1.KeyRecord{PublicKeyPEM: sub.Spec.PublicKeyPEM,
			Fingerprint: "032760a40378d8c2d5f02f764c992ee46b8a19434eae6c3731007b16fb0185ed"})
		expectRefused(alice.Status().Patch(ctx, fed, client.MergeFrom(before)), refusedStatus("Federations"))

		beforeFO := fo.DeepCopy()
		fo.Status.Phase = fv1.PhaseActive
		expectRefused(alice.Status().Patch(ctx, fo, client.MergeFrom(beforeFO)), refusedStatus("FederationOperators"))

		beforeSub := sub.DeepCopy()
		sub.Status.Ed25519Verified, sub.Status.ContinuityVerified = true, true
		expectRefused(alice.Status().Patch(ctx, sub, client.MergeFrom(beforeSub)), refusedStatus("Submissions"))

		beforeXA := xa.DeepCopy()
		xa.Status.Phase = fv1.PhaseAnchored
		expectRefused(alice.Status().Patch(ctx, xa, client.MergeFrom(beforeXA)), refusedStatus("CrossAnchors"))
	})

	It("lets the manager create a Submission and write status", func() {
		review := &authenticationv1.SelfSubjectReview{}
		Expect(k8sClient.Create(ctx, review)).To(Succeed())
		Expect(review.Status.UserInfo.Username).To(Equal(admission.ManagerUsername), "the suite acts as the manager")

		sub := inNamespace(ns, sampleSubmission())
		Expect(k8sClient.Create(ctx, sub)).To(Succeed())
		before := sub.DeepCopy()
		sub.Status.SubmissionID = "manager-wrote-this"
		Expect(k8sClient.Status().Patch(ctx, sub, client.MergeFrom(before))).To(Succeed())
	})

	It("refuses kubectl create by a user, with the message on stderr", func() {
		k := newKubectl() // an administrator, who may impersonate alice
		stderr := k.fails("--as", "alice", "create", "-n", ns, "-f", samplesDir+"/federation_v1alpha1_crossanchor.yaml")
		Expect(stderr).To(And(ContainSubstring("Forbidden"), ContainSubstring(refusedCrossAnchor)))
		stderr = k.fails("--as", "alice", "create", "-n", ns, "-f", samplesDir+"/federation_v1alpha1_submission.yaml")
		Expect(stderr).To(ContainSubstring(refusedSubmission))
		// The administrator is a user like any other here.
		Expect(k.fails("create", "-n", ns, "-f", samplesDir+"/federation_v1alpha1_submission.yaml")).
			To(ContainSubstring(refusedSubmission))

		Expect(k.run("--as", "alice", "create", "-n", ns, "-f", samplesDir+"/federation_v1alpha1_federationoperator.yaml")).
			To(ContainSubstring("federationoperator.federation.cairn.dev/acme-research created"))
	})
})
