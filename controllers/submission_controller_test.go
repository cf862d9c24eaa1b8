package controllers

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

func submissionStatus(ns, name string) func() fv1.SubmissionStatus {
	return func() fv1.SubmissionStatus {
		var s fv1.Submission
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, name)}, &s)).To(Succeed())
		return s.Status
	}
}

// verdict is "<condition>=<status>/<reason>" of a submission's deciding condition:
// ContinuityVerified once set, else SignatureVerified.
func verdict(s fv1.SubmissionStatus) string {
	for _, t := range []fv1.ConditionType{fv1.ConditionContinuityVerified, fv1.ConditionSignatureVerified} {
		if c := meta.FindStatusCondition(s.Conditions, string(t)); c != nil {
			return string(t) + "=" + string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

const (
	accepted           = "ContinuityVerified=True/Verified"
	continuityViolated = "ContinuityVerified=False/ContinuityViolation"
)

var _ = Describe("Submission verification", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	register := func(op testOperator, name string) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, op.object(ns, name))).To(Succeed())
		Eventually(operatorStatus(ns, name)).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
	}
	// headName reads the name of the submission the operator called name records as its
	// head ("" for none).
	headName := func(name string) func() string {
		return func() string {
			if h := operatorStatus(ns, name)().Head; h != nil {
				return h.Submission
			}
			return ""
		}
	}

	It("accepts consecutive submissions from three operators and links each to the last", func() {
		ops := []testOperator{newTestOperator(10, "Org A"), newTestOperator(11, "Org B"), newTestOperator(12, "Org C")}
		for i, op := range ops {
			register(op, []string{"a", "b", "c"}[i])
		}
		name := func(op testOperator, firstSeq int) string {
			return fmt.Sprintf("%s-%d", strings.ReplaceAll(string(op.id()), "_", "-"), firstSeq)
		}
		for i, op := range ops {
			Expect(k8sClient.Create(ctx, op.submission(ns, name(op, 1), op.next(0, 100)))).To(Succeed())
			Eventually(submissionStatus(ns, name(op, 1))).Should(WithTransform(verdict, Equal(accepted)))
			Expect(k8sClient.Create(ctx, op.submission(ns, name(op, 101), op.next(100, 50+int64(i))))).To(Succeed())
		}
		for i, op := range ops {
			second := name(op, 101)
			Eventually(submissionStatus(ns, second)).Should(WithTransform(verdict, Equal(accepted)))
			st := submissionStatus(ns, second)()
			Expect(st.Ed25519Verified && st.ContinuityVerified && !st.Anchored).To(BeTrue())
			Expect(st.PreviousSubmission).To(Equal(subName(ns, name(op, 1))))
			Expect(meta.IsStatusConditionFalse(st.Conditions, string(fv1.ConditionAnchored))).To(BeTrue())
			Expect(meta.IsStatusConditionTrue(st.Conditions, string(fv1.ConditionReady))).To(BeTrue(), "verified: Ready, as the printer column shows")
			Eventually(headName([]string{"a", "b", "c"}[i])).Should(Equal(subName(ns, second)))
			Expect(operatorStatus(ns, []string{"a", "b", "c"}[i])().Head.LastSeq).To(Equal(150 + int64(i)))
		}
	})

	It("refuses a segment that does not continue the last one, and keeps the head", func() {
		op := newTestOperator(13, "Org D")
		register(op, "d")
		Expect(k8sClient.Create(ctx, op.submission(ns, "first", op.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "first")).Should(WithTransform(verdict, Equal(accepted)))

		gap := op.next(11, 5) // skips seq 11
		Expect(k8sClient.Create(ctx, op.submission(ns, "gap", gap))).To(Succeed())
		forked := op.next(10, 5)
		forked.firstPrevHash = op.chainHash(9) // a rewritten history
		Expect(k8sClient.Create(ctx, op.submission(ns, "forked", forked))).To(Succeed())
		for _, name := range []string{"gap", "forked"} {
			Eventually(submissionStatus(ns, name)).Should(WithTransform(verdict, Equal(continuityViolated)))
		}
		Eventually(headName("d")).Should(Equal(subName(ns, "first")))

		By("another export of a segment cannot exist beside it: both have its name")
		Expect(apierrors.IsAlreadyExists(k8sClient.Create(ctx, op.submission(ns, "forked-again", forked)))).To(BeTrue())

		By("a Submission not named after its segment is refused, whatever it holds")
		odd := op.submission(ns, "odd", op.next(10, 5))
		odd.Name = "not-" + odd.Name
		Expect(k8sClient.Create(ctx, odd)).To(Succeed())
		Eventually(func() string {
			var got fv1.Submission
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(odd), &got)).To(Succeed())
			return verdict(got.Status)
		}).Should(Equal("ContinuityVerified=False/" + fv1.ReasonNameNotCanonical))

		// The honest continuation is still accepted, once the refused export is gone.
		deleteRefused(ns, "forked")
		Expect(k8sClient.Create(ctx, op.submission(ns, "next", op.next(10, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "next")).Should(WithTransform(verdict, Equal(accepted)))
	})

	It("refuses a header signed by another key, and fields that differ from the header", func() {
		op := newTestOperator(14, "Org E")
		register(op, "e")
		impostor := newTestOperator(15, "Org E")
		Expect(k8sClient.Create(ctx, impostor.submissionAs(ns, "forged", op.id(), op.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "forged")).Should(WithTransform(verdict, Equal("SignatureVerified=False/SignatureInvalid")))
		Expect(conditionReason(fv1.ConditionReady)(submissionStatus(ns, "forged")().Conditions)).To(Equal("False/SignatureInvalid"))

		deleteRefused(ns, "forged") // the segment's name is free again
		edited := op.submission(ns, "edited", op.next(0, 10))
		edited.Spec.LastHMACHash = fv1.Hash(op.chainHash(11))
		Expect(k8sClient.Create(ctx, edited)).To(Succeed())
		Eventually(submissionStatus(ns, "edited")).Should(WithTransform(verdict, Equal("SignatureVerified=False/HeaderMismatch")))
		Consistently(headName("e"), "1s").Should(BeEmpty())
	})

	It("waits for an operator that is not registered yet", func() {
		op := newTestOperator(16, "Org F")
		Expect(k8sClient.Create(ctx, op.submission(ns, "early", op.next(0, 3)))).To(Succeed())
		Eventually(submissionStatus(ns, "early")).Should(WithTransform(verdict, Equal("SignatureVerified=False/OperatorUnknown")))
		register(op, "f")
		Eventually(submissionStatus(ns, "early")).Should(WithTransform(verdict, Equal(accepted)))
	})
})

// The entry-count rule cannot be reached through a valid header (entry_count equals
// last_seq, so a lower count also breaks continuity), so it is tested on its own.
func TestCheckContinuityEntryCount(t *testing.T) {
	op := newTestOperator(20, "Org G")
	seg := op.next(10, 5)
	sub := &fv1.Submission{Spec: fv1.SubmissionSpec{FirstSeq: seg.firstSeq, LastSeq: seg.lastSeq, EntryCount: seg.lastSeq,
		FirstPrevHash: fv1.Hash(seg.firstPrevHash)}}
	head := &fv1.SubmissionHead{Submission: "prev", LastSeq: 10, LastHMACHash: fv1.Hash(op.chainHash(10)), EntryCount: 16}
	if reason, _ := federation.CheckContinuity(sub, head); reason != fv1.ReasonEntryCountRegression {
		t.Errorf("entry count 15 after 16: %q, want %q", reason, fv1.ReasonEntryCountRegression)
	}
	head.EntryCount = 10
	if reason, msg := federation.CheckContinuity(sub, head); reason != "" {
		t.Errorf("a valid continuation: %s: %s", reason, msg)
	}
}
