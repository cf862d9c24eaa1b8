package controllers

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// The head names the operator's last accepted Submission; these specs check that a name
// alone never stands for the submission it named.
var _ = Describe("Submission head", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// acceptFirst registers op and has its seq 1..10 accepted as s1; it returns the head.
	acceptFirst := func(op testOperator) fv1.SubmissionHead {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, op.object(ns, "op"))).To(Succeed())
		Eventually(operatorStatus(ns, "op")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
		Expect(k8sClient.Create(ctx, op.submission(ns, "s1", op.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "s1")).Should(WithTransform(verdict, Equal(accepted)))
		// The FederationOperator controller records the head after the verdict.
		Eventually(func() *fv1.SubmissionHead { return operatorStatus(ns, "op")().Head }).Should(
			And(Not(BeNil()), HaveField("Submission", subName(ns, "s1"))))
		return *operatorStatus(ns, "op")().Head
	}

	It("refuses a forked segment created under the accepted head's name", func() {
		op := newTestOperator(110, "Head Org")
		before := acceptFirst(op)

		By("deleting s1 and creating a segment with another history under its name")
		var s1 fv1.Submission
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, "s1")}, &s1)).To(Succeed())
		Expect(k8sClient.Delete(ctx, &s1)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(&s1), &fv1.Submission{}))
		}).Should(BeTrue())
		forked := op.next(0, 10)
		forked.lastHMAC = newTestOperator(111, "Another History").chainHash(10)
		Expect(k8sClient.Create(ctx, op.submission(ns, "s1", forked))).To(Succeed())

		Eventually(submissionStatus(ns, "s1")).Should(WithTransform(verdict, Equal(continuityViolated)))
		Expect(*operatorStatus(ns, "op")().Head).To(Equal(before))
		Eventually(func() []string { return eventReasons(ns, subName(ns, "s1")) }).Should(ContainElement(fv1.ReasonContinuityViolation))
	})

	It("accepts the head's own submission again when its status write was lost", func() {
		op := newTestOperator(112, "Lost Write Org")
		before := acceptFirst(op)

		By("clearing s1's status, as if the write after the head moved had failed")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var s1 fv1.Submission
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, "s1")}, &s1)).To(Succeed())
			s1.Status = fv1.SubmissionStatus{}
			return k8sClient.Status().Update(ctx, &s1)
		})).To(Succeed())

		// The verdict was cleared, so seeing it again is the sign that the controller ran.
		Eventually(submissionStatus(ns, "s1")).Should(WithTransform(verdict, Equal(accepted)))
		st := submissionStatus(ns, "s1")()
		Expect(st.Ed25519Verified && st.ContinuityVerified).To(BeTrue())
		Expect(*operatorStatus(ns, "op")().Head).To(Equal(before), "the head does not move")
	})
})

// TestIsHead checks which submissions the head's shortcut takes: only the one it records,
// and, for a head written before heads had uid and chainSignature, one ending at the same
// point of the same chain.
func TestIsHead(t *testing.T) {
	op := newTestOperator(113, "Head Unit Org")
	seg := op.next(0, 10)
	sub := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Name: "s1", UID: types.UID("uid-1")},
		Spec: fv1.SubmissionSpec{FirstSeq: seg.firstSeq, LastSeq: seg.lastSeq, EntryCount: seg.lastSeq,
			FirstPrevHash: fv1.Hash(seg.firstPrevHash), LastHMACHash: fv1.Hash(seg.lastHMAC), ChainSignature: fv1.Hash(op.chainHash(-10))}}
	head := fv1.SubmissionHead{Submission: "s1", LastSeq: 10, LastHMACHash: sub.Spec.LastHMACHash, EntryCount: 10,
		ChainSignature: sub.Spec.ChainSignature, UID: "uid-1"}
	legacy := head
	legacy.ChainSignature, legacy.UID = "", ""
	with := func(h fv1.SubmissionHead, f func(*fv1.SubmissionHead)) *fv1.SubmissionHead { f(&h); return &h }
	for name, tc := range map[string]struct {
		head *fv1.SubmissionHead
		want bool
	}{
		"no head":                   {nil, false},
		"the head itself":           {&head, true},
		"another name":              {with(head, func(h *fv1.SubmissionHead) { h.Submission = "s0" }), false},
		"another object, same name": {with(head, func(h *fv1.SubmissionHead) { h.UID = "uid-0" }), false},
		"another chain signature":   {with(head, func(h *fv1.SubmissionHead) { h.ChainSignature = fv1.Hash(op.chainHash(-9)) }), false},
		"another last hmac_hash":    {with(head, func(h *fv1.SubmissionHead) { h.LastHMACHash = fv1.Hash(op.chainHash(9)) }), false},
		"another last seq":          {with(head, func(h *fv1.SubmissionHead) { h.LastSeq = 9 }), false},
		"another entry count":       {with(head, func(h *fv1.SubmissionHead) { h.EntryCount = 11 }), false},
		"legacy head, same end":     {&legacy, true},
		"legacy head, a fork":       {with(legacy, func(h *fv1.SubmissionHead) { h.LastHMACHash = fv1.Hash(op.chainHash(9)) }), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := isHead(tc.head, sub); got != tc.want {
				t.Errorf("isHead = %v, want %v", got, tc.want)
			}
		})
	}
}
