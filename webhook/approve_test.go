package webhook

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// doFrom sends a request to s as if from the client address addr (host:port) and
// decodes the answer.
func doFrom(s http.Handler, addr, method, path string, body []byte) answer {
	GinkgoHelper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body)).WithContext(ctx)
	req.RemoteAddr = addr
	return record(s, req)
}

// changeSpec applies change to the spec of f's Federation, as GitOps does.
func (f readFederation) changeSpec(change func(*fv1.FederationSpec)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
		change(&fed.Spec)
		return k8sClient.Update(ctx, &fed)
	})).To(Succeed())
	Eventually(func(g Gomega) { // the API reads the Federation from the cache
		var fed, want fv1.Federation
		g.Expect(k8sClient.Get(ctx, f.key, &want)).To(Succeed())
		g.Expect(mgr.GetClient().Get(ctx, f.key, &fed)).To(Succeed())
		g.Expect(fed.ResourceVersion).To(Equal(want.ResourceVersion))
	}).Should(Succeed())
}

// approvalFederation is a Federation of its own under registration: approval.
func approvalFederation(prefix string) readFederation {
	GinkgoHelper()
	f := newTestFederation(prefix, 1)
	f.changeSpec(func(s *fv1.FederationSpec) { s.Registration = fv1.RegistrationApproval })
	return f
}

// registerPending registers r through s and expects it to wait for approval.
func registerPending(s http.Handler, r registrant) string {
	GinkgoHelper()
	a := do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
	Expect(a.status).To(Equal(http.StatusAccepted), "a registration under approval: %s", a.raw)
	Expect(a.body).To(HaveKeyWithValue("status", "pending_approval"))
	Expect(a.body).To(HaveKeyWithValue("operator_id", idOf(r)))
	Expect(a.body).NotTo(HaveKey("tlog_log_index"))
	return idOf(r)
}

var _ = Describe("Registration under approval", func() {
	var (
		f     readFederation
		s     *Server
		admin string
	)
	BeforeEach(func() {
		f = approvalFederation("cairn-approval-")
		s = f.server()
		admin = "Bearer " + adminToken(f.key)
	})

	It("keeps an anonymous registration Pending: unlogged, refused at submit, never anchored, until approved", func() {
		stranger, member := newRegistrant("Anonymous Org"), newRegistrant("Approved Org")
		id := registerPending(s, stranger)
		fo := f.operatorIn(stranger)
		Expect(fo.Status.Phase).To(Equal(fv1.PhasePending))
		Expect(fo.Status.RegistrationLogEntry).To(BeNil(), "a pending registration was logged")
		Expect(fo.Status.RegisteredAt).To(BeNil())
		Expect(fo.Status.KeyHistory).To(BeEmpty())

		By("refusing its submission with 403 operator_pending_approval, creating nothing")
		c := newChain(stranger.key, "pending", 3)
		a := submit(s, stranger.key, c.export(1, 3, exportTime()))
		Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_pending_approval"))
		_, other, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		body := c.export(1, 3, exportTime())
		nonce := protocol.BodyNonce(time.Now(), body)
		forged := (&protocol.Token{OperatorID: id, Nonce: nonce, Signature: ed25519.Sign(other, []byte(nonce))}).String()
		a = submitAs(s, "Bearer "+forged, body)
		Expect(a.status).To(Equal(http.StatusUnauthorized), "only the key's holder learns that it is pending: %s", a.raw)
		Expect(a.body["error"]).To(Equal("unknown_operator"))
		var subs fv1.SubmissionList
		Expect(k8sClient.List(ctx, &subs, client.InNamespace(f.key.Namespace))).To(Succeed())
		Expect(subs.Items).To(BeEmpty())

		By("approving another registration through the API and anchoring it alone")
		memberID := registerPending(s, member)
		a = suspensionCall(s, "approve", memberID, admin, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("status", "active"))
		Expect(a.body["approved_by"]).To(Equal([]any{"api"}))
		Expect(a.body["tlog_log_index"]).To(BeNumerically(">=", 0))
		mc := newChain(member.key, "approved", 3)
		Expect(submit(s, member.key, mc.export(1, 3, exportTime())).status).To(Equal(http.StatusOK))
		a = postAnchor(s, admin)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body["participating_operators"]).To(Equal([]any{memberID}))
		Expect(a.body["participant_details"].([]any)[0]).To(HaveKeyWithValue("operator_id", memberID))

		By("approving the first: registered and logged now, and it may submit")
		a = suspensionCall(s, "approve", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		fo = f.operatorIn(stranger)
		Expect(fo.Status.Phase).To(Equal(fv1.PhaseActive))
		Expect(fo.Status.RegistrationLogEntry).NotTo(BeNil())
		Expect(fo.Status.ApprovedBy).To(Equal([]string{"api"}))
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.RegistrationLogEntry.LogIndex))
		Expect(submit(s, stranger.key, c.export(1, 3, exportTime())).status).To(Equal(http.StatusOK))
		Expect(federationOf(f.key).Status.APIApprovals).To(HaveLen(1), "the applied approval of the other operator was not dropped")
	})

	It("lets only the admin token approve, and answers 404 for an unknown operator and 409 for a registered one", func() {
		r := newRegistrant("Self Approving Org")
		id := registerPending(s, r)
		for header, code := range map[string]string{"": "missing_token", bodyToken(r.key, nil): "invalid_admin_token"} {
			a := suspensionCall(s, "approve", id, header, nil)
			Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
			Expect(a.body["error"]).To(Equal(code))
		}
		Expect(federationOf(f.key).Status.APIApprovals).To(BeEmpty())
		Expect(f.operatorIn(r).Status.Phase).To(Equal(fv1.PhasePending))

		a := suspensionCall(s, "approve", idOf(newRegistrant("Nobody")), admin, nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_found"))
		Expect(suspensionCall(s, "approve", id, admin, nil).status).To(Equal(http.StatusOK))
		a = suspensionCall(s, "approve", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_pending"))
	})

	It("approves nobody when the Federation switches back to open, and registers at once what GitOps approved", func() {
		waiting, listed := newRegistrant("Waiting Org"), newRegistrant("Listed Org")
		registerPending(s, waiting)
		f.changeSpec(func(s *fv1.FederationSpec) {
			s.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: fv1.OperatorID(idOf(listed)), Note: "contract 12"}}
		})
		a := do(s, http.MethodPost, "/federation/register", listed.body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("status", "active"))
		Expect(f.operatorIn(listed).Status.ApprovedBy).To(Equal([]string{"gitops"}))

		f.changeSpec(func(s *fv1.FederationSpec) { s.Registration = fv1.RegistrationOpen })
		Consistently(func() fv1.OperatorPhase { return f.operatorIn(waiting).Status.Phase }, "2s").Should(Equal(fv1.PhasePending))
		a = do(s, http.MethodPost, "/federation/register", newRegistrant("Open Org").body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	})
})

var _ = Describe("The bound on Pending registrations", func() {
	It("refuses a registration past MaxPendingRegistrations with 503, creating nothing, until one is approved", func() {
		f := approvalFederation("cairn-pendingcap-")
		s := f.serverWith(Options{MaxPendingRegistrations: 2})
		first := registerPending(s, newRegistrant("Pending One"))
		registerPending(s, newRegistrant("Pending Two"))
		late := newRegistrant("Pending Three")
		nonce := challenge(s)
		a := do(s, http.MethodPost, "/federation/register", late.body(nonce))
		Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
		Expect(a.body["error"]).To(Equal("too_many_pending_registrations"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, recordKey(nonce), &corev1.ConfigMap{}))).To(BeTrue(), "the refused registration used up its challenge")

		Expect(suspensionCall(s, "approve", first, "Bearer "+adminToken(f.key), nil).status).To(Equal(http.StatusOK))
		Eventually(func() int { return do(s, http.MethodPost, "/federation/register", late.body(challenge(s))).status }).Should(Equal(http.StatusAccepted))
	})
})

var _ = Describe("The per-address registration limit", func() {
	It("refuses one address past the limit with 429 and Retry-After, and still registers another address", func() {
		f := newTestFederation("cairn-reglimit-", 1)
		s := f.serverWith(Options{RegistrationLimit: DefaultRegistrationLimit}) // 10 an hour
		const flooder, honest = "198.51.100.7:40000", "203.0.113.9:5555"
		for i := range DefaultRegistrationLimit {
			r := newRegistrant("Flood Org")
			a := doFrom(s, flooder, http.MethodPost, "/federation/register", r.body(challenge(s)))
			Expect(a.status).To(Equal(http.StatusOK), "registration %d: %s", i+1, a.raw)
		}
		for range 3 {
			r := newRegistrant("Flood Org")
			a := doFrom(s, flooder, http.MethodPost, "/federation/register", r.body(challenge(s)))
			Expect(a.status).To(Equal(http.StatusTooManyRequests), string(a.raw))
			Expect(a.body["error"]).To(Equal("registration_rate_limited"))
			Expect(a.header.Get("Retry-After")).NotTo(BeEmpty())
		}
		var ops fv1.FederationOperatorList
		Expect(k8sClient.List(ctx, &ops, client.InNamespace(f.key.Namespace))).To(Succeed())
		Expect(ops.Items).To(HaveLen(DefaultRegistrationLimit), "a refused registration created an operator")

		a := doFrom(s, honest, http.MethodPost, "/federation/register", newRegistrant("Honest Org").body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	})
})
