package controllers

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
)

var _ = Describe("The history store", func() {
	It("takes finished records out of etcd once their retention passed, and keeps what the next run needs", func() {
		ns := newNamespace()
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) {
			f.Spec.PendingThreshold = &threshold
			f.Spec.History.Retention.Duration = 48 * time.Hour
		})
		op := newTestOperator(93, "History Org")
		submitFor(ns, op, "history", 5)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		firstAnchor := crossAnchors(ns)[0].Name
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, firstAnchor).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		Expect(k8sClient.Create(ctx, op.submission(ns, "history-2", op.next(5, 3)))).To(Succeed())
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(2))
		for _, ca := range crossAnchors(ns) {
			Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, ca.Name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		}
		for _, alias := range []string{"history-1", "history-2"} {
			Eventually(func() bool { return submissionStatus(ns, subName(ns, alias))().Anchored }).Should(BeTrue(), alias)
		}
		Eventually(func() *fv1.SubmissionHead { return operatorStatus(ns, "history")().Head }).
			Should(HaveField("Submission", subName(ns, "history-2")))
		var firstObject fv1.CrossAnchor
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: firstAnchor}, &firstObject)).To(Succeed())

		store, err := history.Open(ctx, history.Options{Driver: history.SQLite, DSN: filepath.Join(GinkgoT().TempDir(), "history.db")})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		archiver := func(after time.Duration) *historyArchiver {
			return &historyArchiver{client: mgrClient, history: store, clock: clock{Now: func() time.Time { return time.Now().Add(after) }}}
		}

		By("nothing moves within the retention")
		moved, err := archiver(47*time.Hour).archive(ctx, currentFederation(fed))
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(Equal(movedCount{}))

		By("past it, the first anchor and the first submission move; the last run's anchor and the head stay")
		moved, err = archiver(49*time.Hour).archive(ctx, currentFederation(fed))
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(Equal(movedCount{anchors: 1, submissions: 1}))
		gone := func(o client.Object, name string) bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o))
		}
		Expect(gone(&fv1.CrossAnchor{}, firstAnchor)).To(BeTrue())
		Expect(gone(&fv1.Submission{}, subName(ns, "history-1"))).To(BeTrue())
		Expect(crossAnchors(ns)).To(HaveLen(1))
		Expect(gone(&fv1.Submission{}, subName(ns, "history-2"))).To(BeFalse())

		stored, err := store.Anchor(ctx, currentFederation(fed), firstAnchor)
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.UID).To(Equal(firstObject.UID))
		Expect(equality.Semantic.DeepEqual(stored.Status, firstObject.Status)).To(BeTrue())
		_, err = store.Submission(ctx, currentFederation(fed), subName(ns, "history-1"))
		Expect(err).NotTo(HaveOccurred())

		By("a second pass finds nothing more to move")
		moved, err = archiver(49*time.Hour).archive(ctx, currentFederation(fed))
		Expect(err).NotTo(HaveOccurred())
		Expect(moved).To(Equal(movedCount{}))

		By("a ledger built at a start folds in the stored anchors, objects or none")
		ledger := &federation.Ledger{Archive: store}
		Expect(ledger.Sync(ctx, k8sClient, currentFederation(fed))).To(Succeed())
		Expect(ledger.Through(currentFederation(fed), op.id())).To(Equal(int64(8)))
		noObjects := fake.NewClientBuilder().WithScheme(newScheme()).Build()
		fromStore := &federation.Ledger{Archive: store}
		Expect(fromStore.Sync(ctx, noObjects, currentFederation(fed))).To(Succeed())
		Expect(fromStore.Through(currentFederation(fed), op.id())).To(Equal(int64(5)), "the stored anchor bound seqs 1-5")

		By("a restore drill: the Federation deleted, then made again under its name, finds its signing key Secret and reads its history")
		before := currentFederation(fed)
		Expect(k8sClient.Delete(ctx, before)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &fv1.Federation{}))
		}).Should(BeTrue())
		Expect(suiteLogs.stop(ctx, client.ObjectKeyFromObject(fed))).To(Succeed())
		suiteLogs.restart(client.ObjectKeyFromObject(fed))
		restored := newFederation(ns, nil)
		Eventually(func() []fv1.KeyRecord { return currentFederation(restored).Status.KeyHistory }).ShouldNot(BeEmpty())
		after := currentFederation(restored)
		Expect(after.UID).NotTo(Equal(before.UID))
		Expect(after.Status.PublicKeyPEM).To(Equal(before.Status.PublicKeyPEM))
		stored, err = store.Anchor(ctx, after, firstAnchor)
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.UID).To(Equal(firstObject.UID))
		_, err = store.Submission(ctx, after, subName(ns, "history-1"))
		Expect(err).NotTo(HaveOccurred())
		restoredLedger := &federation.Ledger{Archive: store}
		Expect(restoredLedger.Sync(ctx, noObjects, after)).To(Succeed())
		Expect(restoredLedger.Through(after, op.id())).To(Equal(int64(5)))
	})
})
