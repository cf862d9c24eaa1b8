package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
)

// The refusals of records' deletion by config/admission's policy, word for word.
const (
	refusedDeleteCrossAnchor = "only the federation manager (" + admission.ManagerUsername +
		") deletes CrossAnchors: they are records that receipts and later anchor runs depend on, and go only" +
		" with their Federation or namespace. Delete the Federation instead: the garbage collector then deletes" +
		" its CrossAnchors. A cluster administrator who really means to delete this one first removes this" +
		" policy's binding (named in this error)"
	refusedDeleteSubmission = "only the federation manager (" + admission.ManagerUsername +
		") deletes accepted Submissions: they record exports the federation verified, which anchors and" +
		" operators' heads depend on, and go only with their namespace. A cluster administrator who really" +
		" means to delete this one first removes this policy's binding (named in this error)"
)

// refusedOwners is the refusal of a change to the owner references of kinds.
func refusedOwners(kinds string) string {
	return "only the federation manager (" + admission.ManagerUsername + ") changes the owner references of " +
		kinds + ": the garbage collector deletes an object whose owners are gone, so an owner reference" +
		" could delete a record"
}

// The users who remove records: the garbage collector, when a record's Federation is
// deleted, and the namespace controller, with its namespace.
const (
	garbageCollector    = "system:serviceaccount:kube-system:generic-garbage-collector"
	namespaceController = "system:serviceaccount:kube-system:namespace-controller"
)

// actingAs is the administrator impersonating user in system:masters: RBAC allows
// everything, so only the admission policy decides.
func actingAs(user string) client.Client {
	c := rest.CopyConfig(adminCfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters"}}
	cl, err := client.New(c, client.Options{Scheme: newScheme()})
	Expect(err).NotTo(HaveOccurred())
	return cl
}

// gone reports whether obj no longer exists.
func gone(obj client.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
	}
}

var _ = Describe("Records nobody deletes (config/admission)", func() {
	var ns string
	var alice, admin client.Client
	BeforeEach(func() {
		ns = newNamespace()
		alice = namespaceUser(ns, "alice")
		admin = actingAs("cluster-admin-bob")
	})

	It("refuses the review's attack: delete --wait=false, then a finalizer patch; the record stays and anchoring goes on", func() {
		threshold := int32(1)
		newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		op := newTestOperator(70, "Victim")
		first := submitFor(ns, op, "victim", 4)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		last := crossAnchors(ns)[0]
		Eventually(submissionStatus(ns, first)).Should(WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef }, Equal(last.Spec.AnchorID)))

		k := newKubectl() // an administrator, who may impersonate alice
		stderr := k.fails("--as", "alice", "delete", "crossanchor", last.Name, "-n", ns, "--wait=false")
		Expect(stderr).To(And(ContainSubstring("Forbidden"), ContainSubstring(refusedDeleteCrossAnchor)))
		k.run("--as", "alice", "patch", "crossanchor", last.Name, "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":[]}}`)
		Consistently(func() *fv1.CrossAnchor { ca := getAnchor(ns, last.Name); return &ca }, 2*time.Second).
			Should(HaveField("DeletionTimestamp", BeNil()), "the record is whole, not Terminating")

		By("the next run anchors after it")
		second := "victim-5"
		Expect(k8sClient.Create(ctx, op.submission(ns, second, op.next(4, 3)))).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
		Eventually(submissionStatus(ns, second)).Should(WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef }, Not(BeEmpty())))
	})

	It("refuses an administrator's delete, one or all, and anyone's owner reference that would let the garbage collector delete it", func() {
		ca := inNamespace(ns, sampleCrossAnchor())
		Expect(k8sClient.Create(ctx, ca)).To(Succeed())

		expectRefused(admin.Delete(ctx, ca), refusedDeleteCrossAnchor)
		expectRefused(alice.Delete(ctx, ca), refusedDeleteCrossAnchor)
		expectRefused(alice.DeleteAllOf(ctx, &fv1.CrossAnchor{}, client.InNamespace(ns)), refusedDeleteCrossAnchor)
		Expect(newKubectl().fails("delete", "crossanchors", "--all", "-n", ns, "--wait=false")).To(ContainSubstring(refusedDeleteCrossAnchor))

		// An owner that does not exist: the garbage collector would delete the record.
		decoy := []byte(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"decoy","uid":"5d1c9a4e-0000-4000-8000-000000000000"}]}}`)
		expectRefused(alice.Patch(ctx, ca, client.RawPatch(types.MergePatchType, decoy)), refusedOwners("CrossAnchors"))
		expectRefused(admin.Patch(ctx, ca, client.RawPatch(types.MergePatchType, decoy)), refusedOwners("CrossAnchors"))
		Expect(getAnchor(ns, ca.Name).OwnerReferences).To(BeEmpty())
	})

	It("lets the manager, the garbage collector and the namespace controller delete a CrossAnchor", func() {
		for _, user := range []string{admission.ManagerUsername, garbageCollector, namespaceController} {
			ca := inNamespace(ns, sampleCrossAnchor())
			Expect(k8sClient.Create(ctx, ca)).To(Succeed())
			Expect(actingAs(user).Delete(ctx, ca)).To(Succeed(), user)
			Eventually(gone(ca)).Should(BeTrue(), user)
		}
		ca := inNamespace(ns, sampleCrossAnchor())
		Expect(k8sClient.Create(ctx, ca)).To(Succeed())
		Expect(actingAs(namespaceController).DeleteAllOf(ctx, &fv1.CrossAnchor{}, client.InNamespace(ns))).To(Succeed(),
			"the namespace controller empties a namespace with deletecollection")
		Eventually(gone(ca)).Should(BeTrue())
	})

	It("keeps an accepted Submission from all but the manager and the garbage collector; a refused one stays deletable", func() {
		newFederation(ns, nil) // no threshold: nothing is anchored
		op := newTestOperator(71, "Keeper")
		acceptedName := submitFor(ns, op, "keeper", 4)
		accepted := getSubmission(ns, acceptedName)
		refused := op.submission(ns, "keeper-gap", op.next(10, 2))
		Expect(k8sClient.Create(ctx, refused)).To(Succeed())
		Eventually(submissionStatus(ns, refused.Name)).Should(WithTransform(verdict, Equal(continuityViolated)))

		expectRefused(alice.Delete(ctx, accepted), refusedDeleteSubmission)
		expectRefused(admin.Delete(ctx, accepted), refusedDeleteSubmission)
		decoy := []byte(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"decoy","uid":"5d1c9a4e-0000-4000-8000-000000000000"}]}}`)
		expectRefused(alice.Patch(ctx, refused, client.RawPatch(types.MergePatchType, decoy)), refusedOwners("Submissions"))

		Expect(alice.Delete(ctx, refused)).To(Succeed(), "a refused export is not a record")
		Eventually(gone(refused)).Should(BeTrue())
		expectRefused(alice.DeleteAllOf(ctx, &fv1.Submission{}, client.InNamespace(ns)), refusedDeleteSubmission)
		Expect(getSubmission(ns, acceptedName).DeletionTimestamp).To(BeNil())
		Expect(actingAs(garbageCollector).Delete(ctx, accepted)).To(Succeed())
		Eventually(gone(accepted)).Should(BeTrue())
	})
})
