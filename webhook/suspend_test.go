package webhook

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// suspensionCall posts body to /federation/operator/{id}/{verb} on s with the
// Authorization header given (none when empty).
func suspensionCall(s http.Handler, verb, id, authorization string, body any) answer {
	GinkgoHelper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
	}
	return doAuth(s, http.MethodPost, "/federation/operator/"+id+"/"+verb, authorization, raw)
}

// operatorIn reads r's FederationOperator in f's namespace from the API server.
func (f readFederation) operatorIn(r registrant) *fv1.FederationOperator {
	GinkgoHelper()
	var fo fv1.FederationOperator
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace,
		Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
	return &fo
}

var _ = Describe("POST /federation/operator/{id}/suspend and /resume", func() {
	var (
		f     readFederation
		s     *Server
		admin string
	)
	BeforeEach(func() {
		f = newTestFederation("cairn-suspend-", 1)
		s = f.server()
		admin = "Bearer " + adminToken(f.key)
	})

	It("lets only the admin token suspend or resume, and writes nothing otherwise", func() {
		r := newRegistrant("Self Suspending Org")
		id := f.register(s, r)
		c := newChain(r.key, "self-suspend", 3)
		body, _ := json.Marshal(suspendRequest{Reason: "I suspend myself"})
		cases := map[string]string{
			"":                                  "missing_token",
			bodyToken(r.key, body):              "invalid_admin_token", // the operator's own token, bound to this body
			"Bearer " + strings.Repeat("0", 64): "invalid_admin_token",
			"Bearer " + adminToken(fedKey):      "invalid_admin_token", // another federation's
		}
		for _, verb := range []string{"suspend", "resume"} {
			for header, code := range cases {
				a := doAuth(s, http.MethodPost, "/federation/operator/"+id+"/"+verb, header, body)
				Expect(a.status).To(Equal(http.StatusUnauthorized), "%s with %q: %s", verb, header, a.raw)
				Expect(a.body["error"]).To(Equal(code))
			}
		}
		fed := federationOf(f.key)
		Expect(fed.Status.APISuspensions).To(BeEmpty())
		Expect(f.operatorIn(r).Status.Suspensions).To(BeEmpty())
		Expect(submit(s, r.key, c.export(1, 3, exportTime())).status).To(Equal(http.StatusOK))
	})

	It("answers 404 for an unknown operator, 400 for a bad ID or reason, 409 to resume an Active one", func() {
		r := newRegistrant("Plain Org")
		id := f.register(s, r)
		a := suspensionCall(s, "suspend", idOf(newRegistrant("Nobody")), admin, suspendRequest{Reason: "x"})
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_found"))
		a = suspensionCall(s, "resume", "op_zz", admin, nil)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_operator_id"))
		for reason, code := range map[string]string{"": "missing_fields", "  \t": "missing_fields", strings.Repeat("é", 513): "invalid_field"} {
			a = suspensionCall(s, "suspend", id, admin, suspendRequest{Reason: reason})
			Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
			Expect(a.body["error"]).To(Equal(code))
		}
		a = suspensionCall(s, "resume", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_suspended"))
		Expect(federationOf(f.key).Status.APISuspensions).To(BeEmpty())
	})

	It("suspends, refuses the operator's submissions with the reason, anchors without it, and resumes it at its head", func() {
		r, other := newRegistrant("Suspended API Org"), newRegistrant("Bystander Org")
		id, otherID := f.register(s, r), f.register(s, other)
		c, oc := newChain(r.key, "suspended-api", 6), newChain(other.key, "bystander", 3)
		first := submit(s, r.key, c.export(1, 3, exportTime()))
		Expect(first.status).To(Equal(http.StatusOK), string(first.raw))

		By("suspending through the API")
		a := suspensionCall(s, "suspend", id, admin, suspendRequest{Reason: "unpaid audit"})
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("phase", "Suspended"))
		Expect(a.body).To(HaveKeyWithValue("reason", "unpaid audit"))
		Expect(a.body["suspended_by"]).To(Equal([]any{"api"}))
		fo := f.operatorIn(r)
		Expect(fo.Status.Phase).To(Equal(fv1.PhaseSuspended))
		Expect(fo.Status.Suspensions).To(HaveLen(1))
		Expect(fo.Status.Suspensions[0].LogEntry).NotTo(BeNil())
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.Suspensions[0].LogEntry.LogIndex))
		Expect(suspensionCall(s, "suspend", id, admin, suspendRequest{Reason: "again"}).status).To(Equal(http.StatusOK), "idempotent")
		Expect(f.operatorIn(r).Status.Suspensions).To(HaveLen(1))
		Expect(federationOf(f.key).Status.APISuspensions[0].Reason).To(Equal("unpaid audit"), "the first reason stays")

		By("refusing its next submission with 403 and the reason")
		next := c.export(4, 6, exportTime())
		a = submit(s, r.key, next)
		Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "operator_suspended"))
		Expect(a.body).To(HaveKeyWithValue("reason", "unpaid audit"))
		Expect(submissionsOfIn(f, id)).To(HaveLen(1))

		By("refusing it still when its status is edited to Active")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			fo := f.operatorIn(r)
			fo.Status.Phase = fv1.PhaseActive
			return k8sClient.Status().Update(ctx, fo)
		})).To(Succeed())
		a = submit(s, r.key, next)
		Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "operator_suspended"))

		By("showing the suspension in the operator summary")
		a = do(s, http.MethodGet, "/federation/operator/"+id, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("phase", "Suspended"))
		Expect(a.body["suspension"]).To(HaveKeyWithValue("reason", "unpaid audit"))
		Expect(a.body["suspensions"]).To(HaveLen(1))

		By("anchoring the bystander alone")
		Expect(submit(s, other.key, oc.export(1, 3, exportTime())).status).To(Equal(http.StatusOK))
		a = postAnchor(s, admin)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body["participating_operators"]).To(Equal([]any{otherID}))
		Expect(a.body["participant_details"].([]any)[0]).To(HaveKeyWithValue("operator_id", otherID))

		By("resuming: Active, and the next submission continues the head")
		a = suspensionCall(s, "resume", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("phase", "Active"))
		fo = f.operatorIn(r)
		Expect(fo.Status.Suspensions).To(HaveLen(2))
		Expect(fo.Status.Suspensions[1].Action).To(Equal(fv1.ActionResume))
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.Suspensions[1].LogEntry.LogIndex))
		Expect(fo.Status.Head.LastSeq).To(BeEquivalentTo(3))
		a = submit(s, r.key, next)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("previous_submission_id", first.body["submission_id"]))
		a = suspensionCall(s, "resume", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
	})

	It("leaves a GitOps suspension to GitOps: resume answers 409 suspended_by_gitops", func() {
		r := newRegistrant("GitOps Suspended Org")
		id := f.register(s, r)
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			fed := federationOf(f.key)
			fed.Spec.SuspendedOperators = []fv1.OperatorSuspension{{OperatorID: fv1.OperatorID(id), Reason: "by the book"}}
			return k8sClient.Update(ctx, fed)
		})).To(Succeed())
		Eventually(func() fv1.OperatorPhase { return f.operatorIn(r).Status.Phase }).Should(Equal(fv1.PhaseSuspended))
		a := suspensionCall(s, "resume", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("suspended_by_gitops"))

		By("suspending through the API as well, then resuming the API's: still suspended by GitOps")
		a = suspensionCall(s, "suspend", id, admin, suspendRequest{Reason: "belt and braces"})
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body["suspended_by"]).To(Equal([]any{"gitops", "api"}))
		a = suspensionCall(s, "resume", id, admin, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("phase", "Suspended"))
		Expect(a.body["suspended_by"]).To(Equal([]any{"gitops"}))
		recs := f.operatorIn(r).Status.Suspensions
		Expect(recs).To(HaveLen(3), "no change of phase, but each change of who suspends it is a record")
		Expect(recs[1].Sources).To(Equal([]string{"gitops", "api"}))
		Expect(recs[2].Sources).To(Equal([]string{"gitops"}))
		Expect(recs[2].LogEntry).NotTo(BeNil())
		c := newChain(r.key, "gitops-suspended", 2)
		Eventually(func(g Gomega) { // once this replica's cache has the Federation the API wrote
			a := submit(s, r.key, c.export(1, 2, exportTime()))
			g.Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
			g.Expect(a.body).To(HaveKeyWithValue("reason", "by the book"))
		}).Should(Succeed())
	})
})

// submissionsOfIn lists, past the cache, the Submissions of operator id in f.
func submissionsOfIn(f readFederation, id string) []fv1.Submission {
	GinkgoHelper()
	var list fv1.SubmissionList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(f.key.Namespace))).To(Succeed())
	var own []fv1.Submission
	for _, sub := range list.Items {
		if string(sub.Spec.OperatorID) == id {
			own = append(own, sub)
		}
	}
	return own
}
