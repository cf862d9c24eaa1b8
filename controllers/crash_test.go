package controllers

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// These specs leave the cluster as a manager killed at one step of an anchor run leaves
// it, by doing that run's steps up to there with the same code, and expect the running
// controllers to finish the run: every submission anchored exactly once, and every anchor
// in the log with receipts that verify.
var _ = Describe("An anchor run interrupted", Label("log"), func() {
	var (
		ns   string
		fed  *fv1.Federation
		subs []string
		run  *FederationReconciler // the interrupted manager's reconciler
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil) // a 6h interval and no threshold: no run of its own
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
		subs = nil
		for i := range 4 {
			op := newTestOperator(byte(70+i), fmt.Sprintf("Crash Org %d", i))
			subs = append(subs, submitFor(ns, op, fmt.Sprintf("crash%d", i), int64(3+i)))
		}
		trust := &federation.Trust{}
		run = &FederationReconciler{Client: mgrClient, APIReader: k8sClient, Logs: suiteLogs, Trust: trust, Ledger: &federation.Ledger{Trust: trust}}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
	})

	// bound waits until the cache shows every submission pending, and returns what a run
	// binds.
	bound := func(r *FederationReconciler) ([]fv1.Participant, map[fv1.OperatorID]int) {
		GinkgoHelper()
		Eventually(func() ([]fv1.Submission, error) { return pendingSubmissions(ctx, mgrClient, ns) }).Should(HaveLen(len(subs)))
		ps, covered, err := r.bindings(ctx, fed)
		Expect(err).NotTo(HaveOccurred())
		return ps, covered
	}

	// createAnchor is the run's first step, as the killed manager did it.
	createAnchor := func() *fv1.CrossAnchor {
		GinkgoHelper()
		ps, covered := bound(run)
		anchors, err := run.createAnchors(ctx, fed, federationSigningKey(fed), ps, covered, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(anchors).To(HaveLen(1))
		return anchors[0]
	}

	// restart wakes the Federation's reconciler, as a restarted manager's first reconcile.
	restart := func() {
		GinkgoHelper()
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
			fed.Annotations = map[string]string{"restarted": metav1.Now().String()}
			return k8sClient.Update(ctx, fed)
		})).To(Succeed())
	}

	// expectFinished checks the outcome a run must have however it was interrupted.
	expectFinished := func(ca *fv1.CrossAnchor) {
		GinkgoHelper()
		for _, s := range subs {
			Eventually(submissionStatus(ns, s)).Should(WithTransform(func(st fv1.SubmissionStatus) fv1.AnchorID { return st.AnchorRef }, Equal(ca.Spec.AnchorID)))
		}
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) fv1.AnchorID {
			if s.LastAnchor == nil {
				return ""
			}
			return s.LastAnchor.AnchorID
		}, Equal(ca.Spec.AnchorID)))
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, ca.Name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		// The Federation has counted the marked submissions: a run now would find nothing.
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) int32 { return s.PendingCount }, BeZero()))
		Expect(crossAnchors(ns)).To(HaveLen(1), "no second anchor")
		anchored := getAnchor(ns, ca.Name)
		verifyReceipts(fed, &anchored)
	}

	It("finishes after the CrossAnchor was created", func() {
		ca := createAnchor()
		restart()
		expectFinished(ca)
	})

	It("finishes after half the submissions were marked", func() {
		ca := createAnchor()
		// The live controllers may wake on these writes and mark the rest, or these very
		// submissions, first: either way each ends up marked once.
		for _, name := range subs[:len(subs)/2] {
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var s fv1.Submission
				Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, name)}, &s)).To(Succeed())
				if s.Status.Anchored {
					return nil
				}
				s.Status.Anchored, s.Status.AnchorRef = true, ca.Spec.AnchorID
				setSubmissionCondition(&s, fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "bound into "+ca.Name)
				return k8sClient.Status().Update(ctx, &s)
			})).To(Succeed())
		}
		restart()
		expectFinished(ca)
	})

	It("logs once when the log took the record before the status said so", func() {
		// The CrossAnchor controller uploads at once, so the upload that "happened before
		// the kill" is made first, then the anchor appears as the crashed run left it.
		log, err := suiteLogs.For(ctx, k8sClient, fed)
		Expect(err).NotTo(HaveOccurred())
		ps, _ := bound(run)
		planned, err := run.createAnchor(ctx, fed, federationSigningKey(fed), suiteClock.Now().UTC(), ps) // named and signed, not yet made
		Expect(err).NotTo(HaveOccurred())
		body, err := crossAnchorRecord(planned, federationSigningKey(fed))
		Expect(err).NotTo(HaveOccurred())
		before, err := log.Upload(ctx, body)
		Expect(err).NotTo(HaveOccurred())

		Expect(k8sClient.Create(ctx, planned.DeepCopy())).To(Succeed())
		restart()
		expectFinished(planned)
		Expect(getAnchor(ns, planned.Name).Status.LogEntry.LogIndex).To(Equal(before.Index), "the same entry, not a second one")
		if !onRekor() { // the shared Rekor may take other entries meanwhile
			after, err := log.Entry(ctx, before.Index)
			Expect(err).NotTo(HaveOccurred())
			Expect(after.Bundle.Verification.InclusionProof.TreeSize).To(Equal(before.Index+1), "nothing logged after it")
		}
	})
})
