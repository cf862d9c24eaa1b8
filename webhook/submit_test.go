package webhook

import (
	"crypto/ed25519"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("POST /federation/submit", func() {
	It("accepts a real export with the seed's fields, and the next segment continuing it", func() {
		s := submitServer(Options{})
		r := registered(s, "Submit Org")
		c := newChain(r.key, "submit", 20)

		a := submit(s, r.key, c.export(1, 10, exportTime()))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("submission_id", subName(r, 1)))
		Expect(a.body).To(HaveKeyWithValue("operator_id", idOf(r)))
		Expect(a.body).To(HaveKeyWithValue("verified", true))
		Expect(a.body).To(HaveKeyWithValue("continuity_verified", true))
		Expect(a.body).To(HaveKeyWithValue("pending_anchor", true))
		Expect(a.body).To(HaveKeyWithValue("entry_count", 10.0))
		Expect(a.body).To(HaveKeyWithValue("first_seq", 1.0))
		Expect(a.body).To(HaveKeyWithValue("last_seq", 10.0))
		Expect(a.body).To(HaveKeyWithValue("entries_verified", 10.0))
		Expect(a.body).NotTo(HaveKey("previous_submission_id"))
		at, err := time.Parse(time.RFC3339, a.body["submitted_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(at.Format(time.RFC3339)).To(Equal(a.body["submitted_at"]), "RFC 3339 UTC in whole seconds")

		By("storing the header, never the entries")
		var sub fv1.Submission
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: submitFed().key.Namespace, Name: subName(r, 1)}, &sub)).To(Succeed())
		Expect(sub.Spec.LastHMACHash).To(BeEquivalentTo(c.hmacAt(10)))
		Expect(protocol.VerifySignedHeader([]byte(sub.Spec.SignedHeader), string(sub.Spec.Signature), r.key.Public().(ed25519.PublicKey))).
			Error().NotTo(HaveOccurred())

		b := submit(s, r.key, c.export(11, 20, exportTime()))
		Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
		Expect(b.body).To(HaveKeyWithValue("submission_id", subName(r, 11)))
		Expect(b.body).To(HaveKeyWithValue("previous_submission_id", subName(r, 1)))
	})

	It("answers a re-sent export with the same submission, also after the operator moved on", func() {
		s := submitServer(Options{})
		r := registered(s, "Resend Org")
		c := newChain(r.key, "resend", 20)
		first := c.export(1, 10, exportTime())
		a := submit(s, r.key, first)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		again := submit(s, r.key, first)
		Expect(again.status).To(Equal(http.StatusOK), string(again.raw))
		Expect(again.body["submission_id"]).To(Equal(a.body["submission_id"]))
		Expect(again.body["submitted_at"]).To(Equal(a.body["submitted_at"]))

		Expect(submit(s, r.key, c.export(11, 20, exportTime())).status).To(Equal(http.StatusOK))
		late := submit(s, r.key, first)
		Expect(late.status).To(Equal(http.StatusOK), string(late.raw))
		Expect(late.body["submission_id"]).To(Equal(a.body["submission_id"]))
		Expect(submissionsOf(idOf(r))).To(HaveLen(2))
	})

	It("refuses a gap or a fork with the seed's 422 continuity_violation body, and keeps no record of it", func() {
		s := submitServer(Options{})
		r := registered(s, "Gap Org")
		c := newChain(r.key, "gap", 20)
		Expect(submit(s, r.key, c.export(1, 10, exportTime())).status).To(Equal(http.StatusOK))

		By("a missing archive: seq 11 is not sent")
		a := submit(s, r.key, c.export(12, 20, exportTime()))
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body).To(Equal(map[string]any{
			"error": "continuity_violation", "message": a.body["message"],
			"expected_first_prev_hash": c.hmacAt(10), "got_first_prev_hash": c.hmacAt(11),
			"previous_submission_id": subName(r, 1), "hint": "Check for a missing archive or local chain rewind.",
			"expected_first_seq": 11.0, "got_first_seq": 12.0,
		}))
		Expect(a.body["message"]).To(ContainSubstring("first_seq is 12, want 11"))
		Expect(submissionsOf(idOf(r))).To(HaveLen(1), "a refused export is not kept")

		By("a rewound chain: seq 11 onward from another history")
		fork := newChain(r.key, "gap fork", 20)
		b := submit(s, r.key, fork.export(11, 20, exportTime()))
		Expect(b.status).To(Equal(http.StatusUnprocessableEntity), string(b.raw))
		Expect(b.body["error"]).To(Equal("continuity_violation"))
		Expect(b.body["expected_first_prev_hash"]).To(Equal(c.hmacAt(10)))
		Expect(b.body["got_first_prev_hash"]).To(Equal(fork.hmacAt(10)))
		Expect(submissionsOf(idOf(r))).To(HaveLen(1))

		By("another export of the accepted segment")
		d := submit(s, r.key, fork.export(1, 10, exportTime()))
		Expect(d.status).To(Equal(http.StatusUnprocessableEntity), string(d.raw))
		Expect(d.body["error"]).To(Equal("continuity_violation"))
		Expect(d.body["conflicting_submission_id"]).To(Equal(subName(r, 1)))

		By("the corrected export lands under the name the refused one had")
		e := submit(s, r.key, c.export(11, 20, exportTime()))
		Expect(e.status).To(Equal(http.StatusOK), string(e.raw))
		Expect(submissionsOf(idOf(r))).To(HaveLen(2))
	})

	It("answers 422 entry_count_regression when the controller finds the count went down", func() {
		s := submitServer(Options{})
		r := registered(s, "Regress Org")
		c := newChain(r.key, "regress", 20)
		Expect(submit(s, r.key, c.export(1, 10, exportTime())).status).To(Equal(http.StatusOK))
		// A head that counts more entries than its last seq, as one recorded from an older
		// chain format would: only the controller's count rule can refuse what follows.
		var fo *fv1.FederationOperator
		Eventually(func() *fv1.SubmissionHead { fo = submitOperator(r); return fo.Status.Head }).ShouldNot(BeNil(),
			"the FederationOperator controller records the head after the verdict")
		fo.Status.Head.EntryCount = 1000
		Expect(k8sClient.Status().Update(ctx, fo)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(fo), fo)).To(Succeed())
			g.Expect(fo.Status.Head.EntryCount).To(BeEquivalentTo(1000))
		}).Should(Succeed())

		a := submit(s, r.key, c.export(11, 20, exportTime()))
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body["error"]).To(Equal("entry_count_regression"))
		Expect(a.body["expected_min_entry_count"]).To(BeEquivalentTo(1000))
		Expect(a.body["got_entry_count"]).To(BeEquivalentTo(20))
		Expect(a.body["previous_submission_id"]).To(Equal(subName(r, 1)))
		Expect(submissionsOf(idOf(r))).To(HaveLen(1))
	})

	It("answers 403 operator_withdrawn to a withdrawn operator, writing nothing", func() {
		s := submitServer(Options{})
		r := registered(s, "Gone Org")
		w := postBody(s, "/federation/withdraw", withdrawalAt(r.key, time.Now().UTC().Format(time.RFC3339)))
		Expect(w.status).To(Equal(http.StatusOK), string(w.raw))
		Eventually(func() fv1.OperatorPhase {
			var fo fv1.FederationOperator
			_ = mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(submitOperator(r)), &fo)
			return fo.Status.Phase
		}).Should(Equal(fv1.PhaseWithdrawn))
		a := submit(s, r.key, newChain(r.key, "gone", 3).export(1, 3, exportTime()))
		Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "operator_withdrawn"))
		Expect(a.body).To(HaveKeyWithValue("operator_id", idOf(r)))
		Expect(submissionsOf(idOf(r))).To(BeEmpty())
	})

	It("answers 504 submission_pending when no verdict comes in time, and the verdict once re-sent", func() {
		s := submitServer(Options{})
		r := registered(s, "Slow Submit Org")
		body := newChain(r.key, "slow", 5).export(1, 5, exportTime())
		impatient := submitServer(Options{RegisterTimeout: time.Millisecond})
		a := submit(impatient, r.key, body)
		Expect(a.status).To(Equal(http.StatusGatewayTimeout), string(a.raw))
		Expect(a.body["error"]).To(Equal("submission_pending"))
		b := submit(s, r.key, body)
		Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
		Expect(submissionsOf(idOf(r))).To(HaveLen(1))
	})
})

var _ = Describe("POST /federation/submit past maxPendingPerOperator", func() {
	It("answers 429 pending_limit_exceeded with Retry-After, keeping nothing", func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-pending-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		key := types.NamespacedName{Namespace: ns.Name, Name: "cairn"}
		fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded},
				MinParticipants: 10000, MaxPendingPerOperator: 1, AnchorInterval: metav1.Duration{Duration: time.Hour}}}
		Expect(k8sClient.Create(ctx, fed)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, key, fed)).To(Succeed())
			g.Expect(fed.Status.PublicKeyPEM).NotTo(BeEmpty())
		}).Should(Succeed())
		s, err := New(Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: key, RatePerSecond: -1, OperatorRatePerSecond: -1})
		Expect(err).NotTo(HaveOccurred())
		r := registered(s, "Busy Org")
		c := newChain(r.key, "busy", 10)
		Expect(submit(s, r.key, c.export(1, 5, exportTime())).status).To(Equal(http.StatusOK))

		a := submit(s, r.key, c.export(6, 10, exportTime()))
		Expect(a.status).To(Equal(http.StatusTooManyRequests), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "pending_limit_exceeded"))
		Expect(a.header.Get("Retry-After")).To(Equal("3600"))
		var subs fv1.SubmissionList
		Expect(k8sClient.List(ctx, &subs, client.InNamespace(ns.Name))).To(Succeed())
		Expect(subs.Items).To(HaveLen(1), "the refused export is not kept")
	})
})
