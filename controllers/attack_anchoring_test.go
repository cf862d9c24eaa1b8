package controllers

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// participant returns ca's entry for op, failing the spec when op does not take part.
func participant(ca *fv1.CrossAnchor, op testOperator) fv1.Participant {
	GinkgoHelper()
	for _, p := range ca.Spec.Participants {
		if p.OperatorID == op.id() {
			return p
		}
	}
	Fail("operator " + string(op.id()) + " is not in " + ca.Name)
	return fv1.Participant{}
}

// The attacks of one member on everyone's anchoring: a run must bind the honest
// operators' next segments whatever another operator sends.
var _ = Describe("Anchoring beside a hostile member", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil) // a 6h interval and no threshold: runs come from requests
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) []fv1.KeyRecord { return s.KeyHistory }, Not(BeEmpty())))
	})

	It("anchors the honest operator's next segment when another sends one chain signature twice", func() {
		mallory, honest := newTestOperator(120, "Mallory"), newTestOperator(121, "Honest")
		Expect(k8sClient.Create(ctx, mallory.object(ns, "mallory"))).To(Succeed())
		Eventually(operatorStatus(ns, "mallory")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
		// Two header-only exports, seq 1..1 and 2..2, with the same chain_signature: the
		// federation holds no secret, so it cannot tell that the second is meaningless.
		x := strings.Repeat("ab", 32)
		for i, seg := range []segment{mallory.next(0, 1), mallory.next(1, 1)} {
			name := []string{"mallory-1", "mallory-2"}[i]
			Expect(k8sClient.Create(ctx, mallory.submissionSigning(ns, name, seg, x))).To(Succeed())
			Eventually(submissionStatus(ns, name)).Should(WithTransform(verdict, Equal(accepted)))
		}
		submitFor(ns, honest, "honest", 5)

		requestAnchor(fed, "run-1")
		first := handledRequest(fed, "run-1")
		Expect(first.Reason).To(Equal(fv1.ReasonAnchored))
		firstAnchor := getAnchor(ns, string(first.AnchorID))
		Expect(participant(&firstAnchor, mallory).LastSeq).To(BeEquivalentTo(2))
		Expect(participant(&firstAnchor, honest).LastSeq).To(BeEquivalentTo(5))

		By("the honest operator's next segment is bound by the next run")
		Expect(k8sClient.Create(ctx, honest.submission(ns, "honest-2", honest.next(5, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "honest-2")).Should(WithTransform(verdict, Equal(accepted)))
		requestAnchor(fed, "run-2")
		second := handledRequest(fed, "run-2")
		Expect(second.Reason).To(Equal(fv1.ReasonAnchored), second.Message)
		secondAnchor := getAnchor(ns, string(second.AnchorID))
		Expect(secondAnchor.Spec.Participants).To(HaveLen(1), "Mallory has nothing new")
		Expect(participant(&secondAnchor, honest).LastSeq).To(BeEquivalentTo(10))
		Eventually(submissionStatus(ns, "honest-2")).Should(WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef },
			Equal(second.AnchorID)))
		for _, name := range []string{"mallory-1", "mallory-2"} {
			Eventually(submissionStatus(ns, name)).Should(WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef },
				Equal(first.AnchorID)), "both of Mallory's submissions lie at or below the seq the first anchor bound")
		}
	})

	It("leaves a second Federation of the namespace idle: it neither anchors for the operators nor blocks the first", func() {
		honest := newTestOperator(123, "Honest Three")
		submitFor(ns, honest, "honest", 4)
		// Made past the admission webhook, which refuses it (a namespace has one Federation).
		second := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"},
			Spec: fv1.FederationSpec{AnchorInterval: metav1.Duration{Duration: time.Minute}, MinParticipants: 1, TransparencyLog: suiteLog()}}
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		Eventually(federationStatus(second)).Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionReady)(s.Conditions)
		}, Equal("False/"+fv1.ReasonNotServing)))
		suiteClock.Step(2 * time.Minute) // the second's interval is due: it still does nothing
		touch(second)
		Consistently(func() []fv1.CrossAnchor { return crossAnchors(ns) }, "2s").Should(BeEmpty())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second-signing-key"}, &corev1.Secret{}))).To(BeTrue(),
			"no key made for it")

		requestAnchor(fed, "with-a-second")
		Expect(handledRequest(fed, "with-a-second").Reason).To(Equal(fv1.ReasonAnchored))
	})

	It("goes on, with a Warning, when the last anchor is gone", func() {
		honest := newTestOperator(122, "Honest Too")
		submitFor(ns, honest, "honest", 4)
		requestAnchor(fed, "before-loss")
		first := handledRequest(fed, "before-loss")
		Expect(first.Reason).To(Equal(fv1.ReasonAnchored))

		By("the record is deleted past the admission policy (here by the manager's own identity), as a restore might lose it")
		Expect(k8sClient.Delete(ctx, &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: string(first.AnchorID)}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(first.AnchorID)}, &fv1.CrossAnchor{}))
		}).Should(BeTrue())

		Expect(k8sClient.Create(ctx, honest.submission(ns, "honest-2", honest.next(4, 3)))).To(Succeed())
		Eventually(submissionStatus(ns, "honest-2")).Should(WithTransform(verdict, Equal(accepted)))
		requestAnchor(fed, "after-loss")
		second := handledRequest(fed, "after-loss")
		Expect(second.Reason).To(Equal(fv1.ReasonAnchored), second.Message)
		Expect(second.AnchorID).NotTo(Equal(first.AnchorID), "the lost anchor's ID is never given again")
		secondAnchor := getAnchor(ns, string(second.AnchorID))
		Expect(participant(&secondAnchor, honest).LastSeq).To(BeEquivalentTo(7))
		Eventually(func() []string { return eventReasons(ns, fed.Name) }).Should(ContainElement(fv1.ReasonAnchorMissing))
	})
})

// More operators than one CrossAnchor holds (the schema allows 10,000, etcd about as many
// in one object) once made every run fail. A run now makes as many anchors as it needs.
var _ = Describe("A run with more operators than one anchor holds", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
		run func() *FederationReconciler // a reconciler whose anchors hold two operators
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil) // a 6h interval and no threshold: only these specs run
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) []fv1.KeyRecord { return s.KeyHistory }, Not(BeEmpty())))
		for i := range 5 {
			submitFor(ns, newTestOperator(byte(130+i), fmt.Sprintf("Crowd Org %d", i)), fmt.Sprintf("crowd%d", i), int64(2+i))
		}
		Eventually(func() ([]fv1.Submission, error) { return pendingSubmissions(ctx, mgrClient, ns) }).Should(HaveLen(5))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
		run = func() *FederationReconciler {
			trust := &federation.Trust{}
			return &FederationReconciler{Client: mgrClient, APIReader: k8sClient, Trust: trust, Ledger: &federation.Ledger{Trust: trust},
				MaxParticipants: 2, clock: clock{Now: suiteClock.Now}}
		}
	})

	// expectBound checks that anchors bind each of the five operators exactly once, and
	// that every submission ends up marked with the anchor that binds its operator.
	expectBound := func(anchors []fv1.CrossAnchor) {
		GinkgoHelper()
		seen := map[fv1.OperatorID]fv1.AnchorID{}
		for _, ca := range anchors {
			Expect(federation.TrustAnchor(currentFederation(fed), &ca)).To(Succeed())
			Expect(len(ca.Spec.Participants)).To(BeNumerically("<=", 2))
			for _, p := range ca.Spec.Participants {
				Expect(seen).NotTo(HaveKey(p.OperatorID), "bound twice")
				seen[p.OperatorID] = ca.Spec.AnchorID
			}
		}
		Expect(seen).To(HaveLen(5))
		for i := range 5 {
			name := fmt.Sprintf("crowd%d-1", i)
			Eventually(submissionStatus(ns, name)).Should(WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef },
				Equal(seen[getSubmission(ns, name).Spec.OperatorID])))
		}
	}

	It("binds them all in one run, in as many anchors as it takes", func() {
		anchors, covered, err := run().run(ctx, fed, federationSigningKey(fed), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(covered).To(Equal(5))
		Expect(anchors).To(HaveLen(3))
		for i, ca := range anchors {
			Expect(ca.Annotations).To(HaveKeyWithValue(fv1.AnchorRunPartAnnotation, fmt.Sprintf("%d/3", i+1)))
			Expect(ca.Spec.AnchoredAt).To(Equal(anchors[0].Spec.AnchoredAt), "one run, one anchoredAt")
		}
		Expect(fed.Status.LastAnchor.AnchorID).To(Equal(anchors[2].Spec.AnchorID))
		expectBound(crossAnchors(ns))

		By("a second run finds nothing left to bind")
		_, _, err = run().run(ctx, fed, federationSigningKey(fed), "")
		Expect(err).To(MatchError(errNotEnoughParticipants))
	})

	It("binds the rest when a run stopped after its first anchor", func() {
		stopped := run()
		bound, covered, err := stopped.bindings(ctx, fed)
		Expect(err).NotTo(HaveOccurred())
		first, err := stopped.createAnchors(ctx, fed, federationSigningKey(fed), bound[:2], covered, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(first).To(HaveLen(1))

		anchors, covered2, err := run().run(ctx, fed, federationSigningKey(fed), "") // a new manager's run
		Expect(err).NotTo(HaveOccurred())
		Expect(covered2).To(Equal(3))
		Expect(anchors).To(HaveLen(2))
		expectBound(crossAnchors(ns))
	})
})
