package webhook

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// withAuthorization is a handler that sets every request's Authorization header to value
// (none when empty) before s serves it.
type withAuthorization struct {
	s     http.Handler
	value string
}

func (h withAuthorization) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.value != "" {
		r.Header.Set("Authorization", h.value)
	}
	h.s.ServeHTTP(w, r)
}

// postAnchor sends POST /federation/anchor to s with the Authorization header given.
func postAnchor(s http.Handler, authorization string) answer {
	GinkgoHelper()
	return do(withAuthorization{s, authorization}, http.MethodPost, "/federation/anchor", nil)
}

// newAnchorFederation creates a Federation that anchors only when asked (6h interval),
// once two operators have pending submissions, and waits for its key and admin Secret.
func newAnchorFederation() readFederation {
	GinkgoHelper()
	return newTestFederation("cairn-anchor-", 2)
}

// adminToken reads the admin token of the Federation key from its Secret.
func adminToken(key types.NamespacedName) string {
	GinkgoHelper()
	var s corev1.Secret
	Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-admin"}, &s)
	}).Should(Succeed())
	token := string(s.Data[federation.AdminTokenSecretKey])
	Expect(token).To(HaveLen(64))
	return token
}

// setAdminToken replaces the admin token in the Federation key's Secret.
func setAdminToken(key types.NamespacedName, token string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var s corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-admin"}, &s)).To(Succeed())
		s.Data[federation.AdminTokenSecretKey] = []byte(token)
		return k8sClient.Update(ctx, &s)
	})).To(Succeed())
}

// federationOf reads the Federation key from the API server.
func federationOf(key types.NamespacedName) *fv1.Federation {
	GinkgoHelper()
	var fed fv1.Federation
	Expect(k8sClient.Get(ctx, key, &fed)).To(Succeed())
	return &fed
}

// anchorsIn lists the CrossAnchors of namespace from the API server.
func anchorsIn(namespace string) []fv1.CrossAnchor {
	GinkgoHelper()
	var list fv1.CrossAnchorList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	return list.Items
}

// twoPending registers two operators through s and has each submit its first entries,
// returning their IDs in order.
func twoPending(f readFederation, s *Server, regs []registrant) []string {
	GinkgoHelper()
	var ids []string
	for i, r := range regs {
		ids = append(ids, f.register(s, r))
		f.submit(r, ids[i], "sub-"+strconv.Itoa(i), 0, 3)
	}
	return ids
}

var _ = Describe("POST /federation/anchor", func() {
	var (
		f    readFederation
		s    *Server
		regs []registrant
	)
	BeforeEach(func() {
		f = newAnchorFederation()
		s = f.server()
		regs = []registrant{newRegistrant("Anchor Org A"), newRegistrant("Anchor Org B")}
	})

	It("refuses every request without exactly this federation's admin token, and writes nothing", func() {
		twoPending(f, s, regs) // a request that got through would anchor them
		token := adminToken(f.key)
		other := adminToken(fedKey) // the suite Federation's: another federation's token
		Expect(other).NotTo(Equal(token))
		cases := map[string]string{
			"":                                  "missing_token",
			"Bearer " + strings.Repeat("0", 64): "invalid_admin_token",
			"Bearer " + other:                   "invalid_admin_token",
			"Bearer " + token + "x":             "invalid_admin_token",
			"Bearer " + token + " ":             "invalid_admin_token",
			"Bearer " + token[:63]:              "invalid_admin_token",
			"bearer " + token:                   "invalid_admin_token",
			token:                               "invalid_admin_token",
			"Basic " + token:                    "invalid_admin_token",
		}
		for header, code := range cases {
			a := postAnchor(s, header)
			Expect(a.status).To(Equal(http.StatusUnauthorized), "Authorization %q: %s", header, a.raw)
			Expect(a.body["error"]).To(Equal(code), "Authorization %q", header)
			Expect(a.header.Get("WWW-Authenticate")).To(HavePrefix("Bearer "))
			Expect(string(a.raw)).NotTo(ContainSubstring(token), "the answer never shows the token")
		}
		fed := federationOf(f.key)
		Expect(fed.Annotations).NotTo(HaveKey(fv1.AnchorRequestAnnotation), "no request was written")
		Expect(fed.Status.AnchorRequest).To(BeNil())
		Expect(anchorsIn(f.key.Namespace)).To(BeEmpty())
	})

	It("reads the token on each request: a replaced Secret counts at once, an empty one disables the endpoint", func() {
		old := adminToken(f.key)
		next := strings.Repeat("ab", 32)
		setAdminToken(f.key, next)
		a := postAnchor(s, "Bearer "+old)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_admin_token"))

		By("the new token asks for a run; with no operator pending it is the seed's no-op")
		a = postAnchor(s, "Bearer "+next)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("status", "no-op"))
		Expect(a.body).To(HaveKeyWithValue("reason", "not enough participants"))
		fed := federationOf(f.key)
		Expect(fed.Status.AnchorRequest).NotTo(BeNil())
		Expect(a.body["request_id"]).To(Equal(fed.Status.AnchorRequest.ID))
		Expect(fed.Annotations).To(HaveKeyWithValue(fv1.AnchorRequestAnnotation, fed.Status.AnchorRequest.ID))
		Expect(anchorsIn(f.key.Namespace)).To(BeEmpty())

		setAdminToken(f.key, "")
		a = postAnchor(s, "Bearer ")
		Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
		Expect(a.body["error"]).To(Equal("admin_token_not_configured"))
	})

	It("anchors the pending submissions once, asked on a replica that runs no controller", func() {
		ids := twoPending(f, s, regs)
		// The suite's second manager: its own cache, no controllers. The leader (the
		// suite's manager) runs the anchor.
		onReplica, err := New(Options{Client: replica.GetClient(), APIReader: replica.GetAPIReader(), Informers: replica.GetCache(), Federation: f.key, RatePerSecond: -1})
		Expect(err).NotTo(HaveOccurred())
		a := postAnchor(onReplica, "Bearer "+adminToken(f.key))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))

		anchors := anchorsIn(f.key.Namespace)
		Expect(anchors).To(HaveLen(1))
		ca := anchors[0]
		Expect(a.body).To(HaveKeyWithValue("status", "anchored"))
		Expect(a.body).To(HaveKeyWithValue("anchor_id", ca.Name))
		Expect(a.body).To(HaveKeyWithValue("cross_anchor_hash", string(ca.Spec.CrossAnchorHash)))
		Expect(a.body).To(HaveKeyWithValue("anchored_at", ca.Spec.AnchoredAt))
		Expect(a.body).To(HaveKeyWithValue("submissions_anchored", BeNumerically("==", 2)))
		Expect(a.body).To(HaveKeyWithValue("participant_count", "2"))
		Expect(a.body["participating_operators"]).To(Equal([]any{string(ca.Spec.Participants[0].OperatorID), string(ca.Spec.Participants[1].OperatorID)}),
			"the seed's member: the operator ID strings")
		parts, _ := a.body["participant_details"].([]any)
		Expect(parts).To(HaveLen(2))
		for i, p := range ca.Spec.Participants {
			Expect(parts[i]).To(HaveKeyWithValue("operator_id", string(p.OperatorID)))
			Expect(parts[i]).To(HaveKeyWithValue("chain_signature", string(p.ChainSignature)))
		}
		Expect([]string{string(ca.Spec.Participants[0].OperatorID), string(ca.Spec.Participants[1].OperatorID)}).To(ConsistOf(ids))
		Expect(federation.TrustAnchor(federationOf(f.key), &ca)).To(Succeed())

		By("the log leg: shown once the log recorded the anchor and its proof verified")
		Expect(a.body["tlog_log_index"]).NotTo(BeNil(), "the embedded log records an anchor within the wait")
		Eventually(func() *fv1.LogEntry { return getCrossAnchor(ca).Status.LogEntry }).ShouldNot(BeNil())
		index := getCrossAnchor(ca).Status.LogEntry.LogIndex
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", index))
		Expect(a.body).To(HaveKeyWithValue("rekor_log_index", strconv.FormatInt(index, 10)))

		fed := federationOf(f.key)
		Expect(a.body["request_id"]).To(Equal(fed.Status.AnchorRequest.ID))
		Expect(fed.Status.AnchorRequest.AnchorID).To(BeEquivalentTo(ca.Name))
		Consistently(func() []fv1.CrossAnchor { return anchorsIn(f.key.Namespace) }, 2*time.Second).Should(HaveLen(1))
	})

	It("coalesces concurrent requests into one run", func() {
		twoPending(f, s, regs)
		token := adminToken(f.key)
		onReplica, err := New(Options{Client: replica.GetClient(), APIReader: replica.GetAPIReader(), Informers: replica.GetCache(), Federation: f.key, RatePerSecond: -1})
		Expect(err).NotTo(HaveOccurred())
		// Warm the replica's cache (its informers start on first use), so that the
		// requests below arrive together.
		Expect(postAnchor(onReplica, "Bearer "+strings.Repeat("0", 64)).status).To(Equal(http.StatusUnauthorized))
		answers := make([]answer, 6)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range answers {
			wg.Go(func() {
				defer GinkgoRecover()
				<-start
				answers[i] = postAnchor([]*Server{s, onReplica}[i%2], "Bearer "+token)
			})
		}
		close(start)
		wg.Wait()
		anchored := map[any]int{} // request ID -> answers
		for _, a := range answers {
			Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			if a.body["status"] == "anchored" {
				anchored[a.body["request_id"]]++
				Expect(a.body["anchor_id"]).NotTo(BeEmpty())
			} else {
				// A request that arrived after the run was handled is a run of its own,
				// with nothing left to anchor.
				Expect(a.body).To(HaveKeyWithValue("status", "no-op"))
			}
		}
		// How many callers join the anchoring request depends on when each arrives; that
		// every one is answered 200 is what joining ensures: a caller whose request another
		// overwrote would wait for it in vain (504).
		Expect(anchored).To(HaveLen(1), "one request anchored")
		Consistently(func() []fv1.CrossAnchor { return anchorsIn(f.key.Namespace) }, 2*time.Second).Should(HaveLen(1), "one run, one anchor")
	})

	It("answers 504 anchor_pending past its wait, and the request still runs", func() {
		twoPending(f, s, regs)
		hasty, err := New(Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: f.key, RatePerSecond: -1,
			RegisterTimeout: time.Nanosecond})
		Expect(err).NotTo(HaveOccurred())
		a := postAnchor(hasty, "Bearer "+adminToken(f.key))
		Expect(a.status).To(Equal(http.StatusGatewayTimeout), string(a.raw))
		Expect(a.body["error"]).To(Equal("anchor_pending"))
		id, _ := a.body["request_id"].(string)
		Expect(id).NotTo(BeEmpty())
		Eventually(func() *fv1.AnchorRequest { return federationOf(f.key).Status.AnchorRequest }).Should(
			And(Not(BeNil()), WithTransform(func(r *fv1.AnchorRequest) string { return r.ID }, Equal(id))))
		Expect(anchorsIn(f.key.Namespace)).To(HaveLen(1))
	})

	It("reports no anchor the federation did not make, whatever status names", func() {
		_, mallory, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		forged := f.anchor("anchor-20261124-900", mallory, "op_0000000000000001", "op_0000000000000002")
		// Status as a stolen manager token could write it: a handled request naming the forgery.
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			fed := federationOf(f.key)
			fed.Status.AnchorRequest = &fv1.AnchorRequest{ID: "forged-1", AnchorID: fv1.AnchorID(forged.Name), Reason: fv1.ReasonAnchored}
			return k8sClient.Status().Update(ctx, fed)
		})).To(Succeed())
		Eventually(func() string {
			var fed fv1.Federation
			Expect(mgr.GetClient().Get(ctx, f.key, &fed)).To(Succeed())
			if fed.Status.AnchorRequest == nil {
				return ""
			}
			return fed.Status.AnchorRequest.ID
		}).Should(Equal("forged-1"))
		short, err := New(Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: f.key, RatePerSecond: -1,
			RegisterTimeout: 2 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		ans, err := short.awaitAnchor(ctx, federationOf(f.key), "forged-1")
		Expect(ans).To(BeNil())
		Expect(err).To(HaveOccurred())
		var ae *apiError
		Expect(errors.As(err, &ae)).To(BeFalse(), "answered 500 internal, the cause logged, not shown")
	})
})

// getCrossAnchor reads ca from the API server.
func getCrossAnchor(ca fv1.CrossAnchor) fv1.CrossAnchor {
	GinkgoHelper()
	var got fv1.CrossAnchor
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&ca), &got)).To(Succeed())
	return got
}
