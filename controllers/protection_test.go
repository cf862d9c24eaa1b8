package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

var _ = Describe("CrossAnchor protection", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	metadata := func(name string) func() metav1.ObjectMeta {
		return func() metav1.ObjectMeta { return getAnchor(ns, name).ObjectMeta }
	}

	It("makes a trusted anchor its Federation's, and takes the old record finalizer off so that no delete hangs", func() {
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		submitFor(ns, newTestOperator(60, "Careful"), "careful", 4)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		ca := crossAnchors(ns)[0]
		owner := federation.RecordOwner(currentFederation(fed))
		owned := And(
			HaveField("OwnerReferences", ConsistOf(owner)),
			HaveField("Finalizers", Not(ContainElement(recordFinalizer))))
		Eventually(metadata(ca.Name)).Should(owned, "the garbage collector deletes it with its Federation, and nothing holds a delete")

		By("an anchor made before: the finalizer, no owner")
		Expect(k8sClient.Patch(ctx, &ca, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":["`+recordFinalizer+`"],"ownerReferences":null}}`)))).To(Succeed())
		Eventually(metadata(ca.Name)).Should(owned)

		By("a delete the old finalizer held: it goes, held only by the spec's own finalizer")
		hold := "cairn.test/hold"
		Expect(k8sClient.Patch(ctx, &ca, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":["`+recordFinalizer+`","`+hold+`"]}}`)))).To(Succeed())
		Expect(k8sClient.Delete(ctx, &ca)).To(Succeed(), "the manager may delete a record; the admission policy refuses everyone else")
		Eventually(metadata(ca.Name)).Should(And(
			HaveField("Finalizers", ConsistOf(hold)),
			HaveField("DeletionTimestamp", Not(BeNil()))))
		Expect(eventReasons(ns, ca.Name)).NotTo(ContainElement(fv1.ReasonDeletionRefused))
		Expect(k8sClient.Patch(ctx, &ca, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(gone(&ca)).Should(BeTrue())
	})
})
