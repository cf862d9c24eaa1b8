package controllers

import (
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// anchorCreatedHooks are the specs' AnchorCreated hooks, by namespace: the suite's
// manager calls onAnchorCreated after every anchor run's Create.
var anchorCreatedHooks sync.Map

// onAnchorCreated calls the hook of ca's namespace, if a spec set one.
func onAnchorCreated(ca *fv1.CrossAnchor) {
	if h, ok := anchorCreatedHooks.Load(ca.Namespace); ok {
		h.(func(*fv1.CrossAnchor))(ca)
	}
}

var _ = Describe("An anchor request", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil) // a 6h interval and no threshold: no run of its own
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) []fv1.KeyRecord { return s.KeyHistory }, Not(BeEmpty())))
	})

	request := func(id string) { GinkgoHelper(); requestAnchor(fed, id) }
	handled := func(id string) *fv1.AnchorRequest { GinkgoHelper(); return handledRequest(fed, id) }

	It("runs an anchor at once, records it once, and leaves the schedule as it was", func() {
		submitFor(ns, newTestOperator(90, "Request Org A"), "a", 3)
		submitFor(ns, newTestOperator(91, "Request Org B"), "b", 4)
		Expect(crossAnchors(ns)).To(BeEmpty(), "not due for 6h")
		next := federationStatus(fed)().NextAnchorTime
		Expect(next).NotTo(BeNil())

		request("2026-11-24T08:00:00Z")
		req := handled("2026-11-24T08:00:00Z")
		Expect(req.Reason).To(Equal(fv1.ReasonAnchored))
		Expect(req.SubmissionsAnchored).To(BeEquivalentTo(2))
		Expect(req.HandledAt.IsZero()).To(BeFalse())
		anchors := crossAnchors(ns)
		Expect(anchors).To(HaveLen(1))
		Expect(anchors[0].Name).To(Equal(string(req.AnchorID)))
		Expect(anchors[0].Annotations).To(HaveKeyWithValue(fv1.AnchorRequestIDAnnotation, "2026-11-24T08:00:00Z"))
		Expect(federationStatus(fed)().NextAnchorTime.Time).To(BeTemporally("==", next.Time), "the schedule did not move")

		Consistently(func() []fv1.CrossAnchor { return crossAnchors(ns) }, 2*time.Second).Should(HaveLen(1), "a handled request is not run again")

		By("a second request with nothing pending is recorded without an anchor")
		request("second")
		req = handled("second")
		Expect(req.Reason).To(Equal(fv1.ReasonNotEnoughParticipants))
		Expect(req.AnchorID).To(BeEmpty())
		Expect(req.Message).To(ContainSubstring("not enough participants"))
		Expect(crossAnchors(ns)).To(HaveLen(1))
		recent := federationStatus(fed)().RecentAnchorRequests
		Expect(recent).To(HaveLen(2), "newest first, both kept for callers still waiting")
		Expect(recent[0].ID).To(Equal("second"))
		Expect(recent[1].ID).To(Equal("2026-11-24T08:00:00Z"))
	})

	It("ignores an annotation that is not a request ID", func() {
		submitFor(ns, newTestOperator(92, "Request Org C"), "c", 2)
		request("not a valid id")
		Consistently(func(g Gomega) {
			g.Expect(crossAnchors(ns)).To(BeEmpty())
			g.Expect(federationStatus(fed)().AnchorRequest).To(BeNil())
		}, 3*time.Second).Should(Succeed())
	})

	It("records a request once when its run stopped after creating the anchor", func() {
		var created atomic.Int32
		anchorCreatedHooks.Store(ns, func(*fv1.CrossAnchor) {
			if created.Add(1) == 1 {
				// A crash between the Create and the status write: controller-runtime
				// recovers the panic, the status is not written, the reconcile is retried.
				panic("crash after the CrossAnchor was created")
			}
		})
		DeferCleanup(func() { anchorCreatedHooks.Delete(ns) })
		submitFor(ns, newTestOperator(93, "Request Org D"), "d", 3)
		submitFor(ns, newTestOperator(94, "Request Org E"), "e", 5)

		request("crash-1")
		req := handled("crash-1")
		Expect(req.Reason).To(Equal(fv1.ReasonAnchored))
		Expect(req.SubmissionsAnchored).To(BeEquivalentTo(2))
		Consistently(func() []fv1.CrossAnchor { return crossAnchors(ns) }, 3*time.Second).Should(HaveLen(1), "no second anchor")
		Expect(created.Load()).To(BeEquivalentTo(1), "one run made one anchor")
		Expect(crossAnchors(ns)[0].Name).To(Equal(string(req.AnchorID)))
		Expect(federationStatus(fed)().AnchorRequest).To(Equal(req), "recorded once")
	})
})
