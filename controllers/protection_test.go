package controllers

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

var _ = Describe("CrossAnchor protection", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	anchorRef := func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef }
	finalizers := func(name string) func() []string {
		return func() []string { ca := getAnchor(ns, name); return ca.Finalizers }
	}

	It("keeps a deleted anchor while its Federation exists, and lets it go with the Federation", func() {
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		op := newTestOperator(60, "Careful")
		first := submitFor(ns, op, "careful", 4)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		ca := crossAnchors(ns)[0]
		Expect(ca.Finalizers).To(ConsistOf(recordFinalizer), "an anchor run creates it protected")
		Eventually(submissionStatus(ns, first)).Should(WithTransform(anchorRef, Equal(ca.Spec.AnchorID)))

		// An anchor made before the finalizer existed is given it.
		Expect(k8sClient.Patch(ctx, &ca, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(finalizers(ca.Name)).Should(ConsistOf(recordFinalizer))

		// Deleted while the Federation exists, it stays, says why, and the next run
		// anchors after it.
		Expect(k8sClient.Delete(ctx, &ca)).To(Succeed())
		Eventually(func() []string { return eventReasons(ns, ca.Name) }).Should(ContainElement(fv1.ReasonDeletionRefused))
		Expect(getAnchor(ns, ca.Name).DeletionTimestamp).NotTo(BeNil(), "kept, Terminating, after the controller refused to let it go")
		second := "careful-5"
		Expect(k8sClient.Create(ctx, op.submission(ns, second, op.next(4, 3)))).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
		Eventually(submissionStatus(ns, second)).Should(WithTransform(anchorRef, Not(BeEmpty())))
		Expect(submissionStatus(ns, first)().AnchorRef).To(Equal(ca.Spec.AnchorID))

		// Once the Federation is deleted, the deleted anchor goes; the other stays, a
		// record, until it is deleted in turn.
		Expect(k8sClient.Delete(ctx, fed)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(&ca), &fv1.CrossAnchor{}))
		}, 30*time.Second).Should(BeTrue())
		remaining := crossAnchors(ns)
		Expect(remaining).To(HaveLen(1))
		Expect(remaining[0].DeletionTimestamp).To(BeNil())
		Expect(k8sClient.Delete(ctx, &remaining[0])).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }, 30*time.Second).Should(BeEmpty())
	})
})
