package controllers

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

func submissionStatus(ns, name string) func() fv1.SubmissionStatus {
	return func() fv1.SubmissionStatus {
		var s fv1.Submission
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
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
	head := func(name string) *fv1.SubmissionHead { return operatorStatus(ns, name)().Head }

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
			Expect(st.PreviousSubmission).To(Equal(name(op, 1)))
			Expect(meta.IsStatusConditionFalse(st.Conditions, string(fv1.ConditionAnchored))).To(BeTrue())
			Expect(meta.IsStatusConditionTrue(st.Conditions, string(fv1.ConditionReady))).To(BeTrue(), "verified: Ready, as the printer column shows")
			h := head([]string{"a", "b", "c"}[i])
			Expect(h.Submission).To(Equal(second))
			Expect(h.LastSeq).To(Equal(150 + int64(i)))
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
		Expect(head("d").Submission).To(Equal("first"))

		// The honest continuation is still accepted.
		Expect(k8sClient.Create(ctx, op.submission(ns, "next", op.next(10, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "next")).Should(WithTransform(verdict, Equal(accepted)))
	})

	It("refuses a header signed by another key, and fields that differ from the header", func() {
		op := newTestOperator(14, "Org E")
		register(op, "e")
		impostor := newTestOperator(15, "Org E")
		forged := impostor.submission(ns, "forged", op.next(0, 10))
		forged.Spec.OperatorID = op.id()
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		edited := op.submission(ns, "edited", op.next(0, 10))
		edited.Spec.LastHMACHash = fv1.Hash(op.chainHash(11))
		Expect(k8sClient.Create(ctx, edited)).To(Succeed())

		Eventually(submissionStatus(ns, "forged")).Should(WithTransform(verdict, Equal("SignatureVerified=False/SignatureInvalid")))
		Expect(conditionReason(fv1.ConditionReady)(submissionStatus(ns, "forged")().Conditions)).To(Equal("False/SignatureInvalid"))
		Eventually(submissionStatus(ns, "edited")).Should(WithTransform(verdict, Equal("SignatureVerified=False/HeaderMismatch")))
		Expect(head("e")).To(BeNil())
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
