package controllers

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("Suspension", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil) // a 6h interval: anchors only when asked
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) []fv1.KeyRecord { return s.KeyHistory }, Not(BeEmpty())))
	})

	// changeFederation applies change to fed as it is now: to its spec (as GitOps does),
	// or, when status, to its status (as the admin API does).
	changeFederation := func(status bool, change func(*fv1.Federation)) {
		GinkgoHelper()
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var f fv1.Federation
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
			change(&f)
			if status {
				return k8sClient.Status().Update(ctx, &f)
			}
			return k8sClient.Update(ctx, &f)
		})).To(Succeed())
	}
	// anchorNow asks for an anchor run, as POST /federation/anchor does, and returns the
	// anchor it made.
	anchorNow := func(id string) *fv1.CrossAnchor {
		GinkgoHelper()
		changeFederation(false, func(f *fv1.Federation) {
			if f.Annotations == nil {
				f.Annotations = map[string]string{}
			}
			f.Annotations[fv1.AnchorRequestAnnotation] = id
		})
		var ca fv1.CrossAnchor
		Eventually(func(g Gomega) {
			req := federationStatus(fed)().AnchorRequest
			g.Expect(req).NotTo(BeNil())
			g.Expect(req.ID).To(Equal(id))
			g.Expect(req.AnchorID).NotTo(BeEmpty(), req.Message)
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(req.AnchorID)}, &ca)).To(Succeed())
		}).Should(Succeed())
		return &ca
	}
	participants := func(ca *fv1.CrossAnchor) []fv1.OperatorID {
		var ids []fv1.OperatorID
		for _, p := range ca.Spec.Participants {
			ids = append(ids, p.OperatorID)
		}
		return ids
	}
	records := func(n int) func() []fv1.SuspensionRecord {
		return func() []fv1.SuspensionRecord {
			recs := operatorStatus(ns, "a")().Suspensions
			if len(recs) != n || recs[n-1].LogEntry == nil {
				return nil
			}
			return recs
		}
	}

	It("suspends through GitOps and the API, leaves the operator out of anchors, and resumes it at its head", func() {
		a, b := newTestOperator(150, "Suspended Org"), newTestOperator(151, "Other Org")
		submitFor(ns, a, "a", 3)
		submitFor(ns, b, "b", 3)
		self := fed.Namespace + "/" + fed.Name

		By("suspending a through spec.suspendedOperators")
		changeFederation(false, func(f *fv1.Federation) {
			f.Spec.SuspendedOperators = []fv1.OperatorSuspension{{OperatorID: a.id(), Reason: "audit of key custody"}}
		})
		Eventually(records(1)).ShouldNot(BeNil())
		Eventually(func() *fv1.SubmissionHead { return operatorStatus(ns, "a")().Head }).ShouldNot(BeNil())
		st := operatorStatus(ns, "a")()
		Expect(st.Phase).To(Equal(fv1.PhaseSuspended))
		Expect(st.Head.LastSeq).To(BeEquivalentTo(3))
		rec := st.Suspensions[0]
		Expect(rec.Action).To(Equal(fv1.ActionSuspend))
		Expect(rec.Sources).To(Equal([]string{fv1.SuspensionSourceGitOps}))
		loggedRecord(fed, rec.LogEntry, protocol.SuspensionRecord{Type: protocol.RecordSuspension, Federation: self,
			OperatorID: string(a.id()), At: string(rec.At), Reason: "audit of key custody", Sources: []string{"gitops"}})

		By("putting back a phase edited to Active, without a second record")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var fo fv1.FederationOperator
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &fo)).To(Succeed())
			fo.Status.Phase = fv1.PhaseActive
			return k8sClient.Status().Update(ctx, &fo)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "a")).Should(WithTransform(phase, Equal(fv1.PhaseSuspended)))
		Expect(operatorStatus(ns, "a")().Suspensions).To(HaveLen(1))

		By("anchoring b alone: a's pending submission, accepted before the suspension, waits")
		ca := anchorNow("suspension-1")
		Expect(participants(ca)).To(Equal([]fv1.OperatorID{b.id()}))
		Consistently(submissionStatus(ns, "a-1"), "1s").Should(WithTransform(func(s fv1.SubmissionStatus) bool { return s.Anchored }, BeFalse()))

		By("suspending through the API too, then lifting the GitOps entry: the API's still holds, and the log says who holds it")
		changeFederation(true, func(f *fv1.Federation) {
			f.Status.APISuspensions = append(f.Status.APISuspensions, fv1.APISuspension{
				OperatorSuspension: fv1.OperatorSuspension{OperatorID: a.id(), Reason: "incident 42"}, SuspendedAt: metav1.Now()})
		})
		Eventually(records(2)).ShouldNot(BeNil())
		rec = operatorStatus(ns, "a")().Suspensions[1]
		Expect(rec.Action).To(Equal(fv1.ActionSuspend))
		loggedRecord(fed, rec.LogEntry, protocol.SuspensionRecord{Type: protocol.RecordSuspension, Federation: self,
			OperatorID: string(a.id()), At: string(rec.At), Reason: "audit of key custody; incident 42", Sources: []string{"gitops", "api"}})
		changeFederation(false, func(f *fv1.Federation) { f.Spec.SuspendedOperators = nil })
		Eventually(records(3)).ShouldNot(BeNil())
		Consistently(operatorStatus(ns, "a"), "1s").Should(WithTransform(phase, Equal(fv1.PhaseSuspended)))
		rec = operatorStatus(ns, "a")().Suspensions[2]
		loggedRecord(fed, rec.LogEntry, protocol.SuspensionRecord{Type: protocol.RecordSuspension, Federation: self,
			OperatorID: string(a.id()), At: string(rec.At), Reason: "incident 42", Sources: []string{"api"}})
		Expect(operatorStatus(ns, "a")().Suspensions).To(HaveLen(3))
		Expect(federationStatus(fed)().APISuspensions).To(HaveLen(1), "a spec update leaves the API's suspensions")

		By("resuming when the API lifts its suspension")
		changeFederation(true, func(f *fv1.Federation) { f.Status.APISuspensions = nil })
		Eventually(records(4)).ShouldNot(BeNil())
		st = operatorStatus(ns, "a")()
		Expect(st.Phase).To(Equal(fv1.PhaseActive))
		Expect(st.Head.LastSeq).To(BeEquivalentTo(3), "the head is unchanged")
		rec = st.Suspensions[3]
		Expect(rec.Action).To(Equal(fv1.ActionResume))
		loggedRecord(fed, rec.LogEntry, protocol.SuspensionRecord{Type: protocol.RecordResumption, Federation: self,
			OperatorID: string(a.id()), At: string(rec.At), Sources: []string{}})

		By("anchoring a's waiting submission in the next run, and accepting the segment after its head")
		ca = anchorNow("suspension-2")
		Expect(participants(ca)).To(Equal([]fv1.OperatorID{a.id()}))
		Eventually(submissionStatus(ns, "a-1")).Should(WithTransform(func(s fv1.SubmissionStatus) bool { return s.Anchored }, BeTrue()))
		gap := a.submission(ns, "a-gap", a.next(4, 2))
		Expect(k8sClient.Create(ctx, gap)).To(Succeed())
		Eventually(submissionStatus(ns, "a-gap")).Should(WithTransform(verdict, Not(Equal(accepted))))
		Expect(k8sClient.Create(ctx, a.submission(ns, "a-2", a.next(3, 2)))).To(Succeed())
		Eventually(submissionStatus(ns, "a-2")).Should(WithTransform(verdict, Equal(accepted)))
		Expect(submissionStatus(ns, "a-2")().PreviousSubmission).To(Equal(subName(ns, "a-1")))
	})

	It("keeps an API suspension, and logs no resumption, when a second Federation appears in the namespace", func() {
		a, b := newTestOperator(153, "Suspended Org"), newTestOperator(154, "Bystander Org")
		submitFor(ns, a, "a", 3)
		submitFor(ns, b, "b", 3)

		By("suspending a through the API")
		changeFederation(true, func(f *fv1.Federation) {
			f.Status.APISuspensions = append(f.Status.APISuspensions, fv1.APISuspension{
				OperatorSuspension: fv1.OperatorSuspension{OperatorID: a.id(), Reason: "incident 7"}, SuspendedAt: metav1.Now()})
		})
		Eventually(records(1)).ShouldNot(BeNil())

		By("creating a second, newer Federation beside the first")
		second := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed-2"},
			Spec: fv1.FederationSpec{AnchorInterval: metav1.Duration{Duration: 6 * time.Hour}, MinParticipants: 1, TransparencyLog: suiteLog()}}
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		touch(b.object(ns, "b")) // whatever the watches enqueue, both operators are reconciled again
		touch(a.object(ns, "a"))
		Consistently(operatorStatus(ns, "a"), "3s").Should(And(
			WithTransform(phase, Equal(fv1.PhaseSuspended)),
			WithTransform(func(s fv1.FederationOperatorStatus) int { return len(s.Suspensions) }, Equal(1)),
		), "a second Federation resumed the operator the first one's administrators suspended")
		Expect(operatorStatus(ns, "b")().Phase).To(Equal(fv1.PhaseActive))
	})

	It("refuses through the API server an invalid or repeated suspension entry", func() {
		id := newTestOperator(152, "").id()
		cases := map[string][]fv1.OperatorSuspension{
			"a malformed ID":  {{OperatorID: "op_XYZ", Reason: "r"}},
			"an empty reason": {{OperatorID: id, Reason: ""}},
			"a blank reason":  {{OperatorID: id, Reason: "   "}},
			"a long reason":   {{OperatorID: id, Reason: string(make([]byte, 513))}},
			"a repeated ID":   {{OperatorID: id, Reason: "one"}, {OperatorID: id, Reason: "two"}},
		}
		for name, list := range cases {
			var f fv1.Federation
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
			f.Spec.SuspendedOperators = list
			Expect(k8sClient.Update(ctx, &f)).NotTo(Succeed(), name)
		}
		Expect(slices.ContainsFunc(currentFederation(fed).Spec.SuspendedOperators, func(s fv1.OperatorSuspension) bool { return s.OperatorID == id })).To(BeFalse())
	})
})
