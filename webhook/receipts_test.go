package webhook

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("GET /federation/receipts and GET /receipts", Ordered, func() {
	var (
		f               readFederation
		s               *Server
		alice, bob      registrant
		fedPub          ed25519.PublicKey
		logPub          crypto.PublicKey
		routes          = []string{"/federation/receipts", "/receipts"}
		aliceID, bobID  string
		withdrawnServer *Server
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.serverWith(Options{LogDir: logDir})
		withdrawnServer = s
		alice, bob = newRegistrant("Receipts Alice"), newRegistrant("Receipts Bob")
		aliceID, bobID = f.register(s, alice), f.register(s, bob)
		f.submit(alice, aliceID, "receipts-alice-1", 0, 4)
		f.submit(bob, bobID, "receipts-bob-1", 0, 6)
		subA, subB := f.submission("receipts-alice-1"), f.submission("receipts-bob-1")
		key := f.signingKey()
		logged(f.anchorOver("anchor-20261103-001", key, subA, subB))
		logged(f.anchorOver("anchor-20261103-002", key, subA))
		logged(f.anchorOver("anchor-20261103-003", key, subB))
		_, forger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		f.anchorOver("anchor-20261103-004", forger, subA) // not the federation's: no receipt

		fedPub, logPub = key.Public().(ed25519.PublicKey), f.logKey()
	})

	// anchorIDs returns the anchor IDs of a page's receipts, in order, after checking
	// that each verifies under the federation's key and the log's, log leg included.
	anchorIDs := func(a answer) []string {
		GinkgoHelper()
		var page struct {
			Receipts []json.RawMessage `json:"receipts"`
		}
		Expect(json.Unmarshal(a.raw, &page)).To(Succeed())
		ids := []string{}
		for _, raw := range page.Receipts {
			rep, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: fedPub, LogKey: logPub})
			Expect(err).NotTo(HaveOccurred(), string(raw))
			Expect(rep.Receipt.TLogEntry).NotTo(BeEmpty(), "a logged anchor's receipt carries the log's proof bundle")
			Expect(rep.Receipt.TLogLogIndex).NotTo(BeNil())
			ids = append(ids, rep.Receipt.AnchorID)
		}
		return ids
	}

	It("refuses a request without a token, 401 missing_token", func() {
		for _, path := range routes {
			a := do(s, http.MethodGet, path, nil)
			Expect(a.status).To(Equal(http.StatusUnauthorized), path)
			Expect(a.body).To(HaveKeyWithValue("error", "missing_token"))
			Expect(a.header.Get("WWW-Authenticate")).NotTo(BeEmpty())
		}
	})

	It("refuses a token another key signed for the operator's ID, 401 invalid_token", func() {
		stranger := newRegistrant("Stranger")
		nonce := protocol.BodyNonce(time.Now(), nil)
		sig := base64.StdEncoding.EncodeToString(ed25519.Sign(stranger.key, []byte(nonce)))
		for _, path := range routes {
			a := doAuth(s, http.MethodGet, path, "Bearer "+aliceID+"."+nonce+"."+sig, nil)
			Expect(a.status).To(Equal(http.StatusUnauthorized), path+": "+string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_token"))
			Expect(string(a.raw)).NotTo(ContainSubstring("anchor-2026"))
		}
		a := doAuth(s, http.MethodGet, "/receipts", bearer(stranger.key, nil), nil)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "unknown_operator"))
	})

	It("refuses a token that binds a body, sent with it or not, 401 invalid_token", func() {
		body := []byte(`{"export":"x"}`)
		for _, sent := range [][]byte{body, nil} {
			a := doAuth(s, http.MethodGet, "/federation/receipts", bearer(alice.key, body), sent)
			Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_token"))
		}
	})

	It("limits each operator once its token verified: 429 with Retry-After; forged tokens spend nothing of it", func() {
		limited := f.serverWith(Options{LogDir: logDir, OperatorRatePerSecond: 0.01, OperatorRateBurst: 2})
		stranger := newRegistrant("Budget thief")
		nonce := protocol.BodyNonce(time.Now(), nil)
		forged := "Bearer " + aliceID + "." + nonce + "." + base64.StdEncoding.EncodeToString(ed25519.Sign(stranger.key, []byte(nonce)))
		for range 5 {
			Expect(doAuth(limited, http.MethodGet, "/receipts", forged, nil).status).To(Equal(http.StatusUnauthorized))
		}
		for range 2 {
			a := doAuth(limited, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
			Expect(a.status).To(Equal(http.StatusOK), "the forged tokens spent none of Alice's burst: "+string(a.raw))
		}
		a := doAuth(limited, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
		Expect(a.status).To(Equal(http.StatusTooManyRequests), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "rate_limited"))
		Expect(a.header.Get("Retry-After")).To(MatchRegexp(`^[1-9][0-9]*$`))
		b := doAuth(limited, http.MethodGet, "/receipts", bearer(bob.key, nil), nil)
		Expect(b.status).To(Equal(http.StatusOK), "Bob has a budget of his own: "+string(b.raw))
	})

	It("accepts a challenge token once, then answers 401 token_replayed", func() {
		tok, err := protocol.SignToken(alice.key, challenge(s))
		Expect(err).NotTo(HaveOccurred())
		a := doAuth(s, http.MethodGet, "/receipts", "Bearer "+tok, nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		a = doAuth(s, http.MethodGet, "/receipts", "Bearer "+tok, nil)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "token_replayed"))
	})

	It("answers each operator its own receipts only, newest first, each verifying under the federation's and the log's keys", func() {
		for _, path := range routes {
			a := doAuth(s, http.MethodGet, path, bearer(alice.key, nil), nil)
			Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("operator_id", aliceID))
			Expect(a.body).To(HaveKeyWithValue("next_page_token", BeNil()))
			Expect(anchorIDs(a)).To(Equal([]string{"anchor-20261103-002", "anchor-20261103-001"}), "not Bob's -003, not the forged -004")

			b := doAuth(s, http.MethodGet, path, bearer(bob.key, nil), nil)
			Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
			Expect(b.body).To(HaveKeyWithValue("operator_id", bobID))
			Expect(anchorIDs(b)).To(Equal([]string{"anchor-20261103-003", "anchor-20261103-001"}))
		}
	})

	It("signs each receipt with the key that signed its anchor", func() {
		a := doAuth(s, http.MethodGet, "/receipts", bearer(alice.key, nil), nil)
		var page receiptsResponse
		Expect(json.Unmarshal(a.raw, &page)).To(Succeed())
		Expect(page.Receipts).NotTo(BeEmpty())
		for _, raw := range page.Receipts {
			var r protocol.Receipt
			Expect(json.Unmarshal(raw, &r)).To(Succeed())
			pub, err := protocol.ParsePublicKeyPEM([]byte(r.FederationPublicKeyPEM))
			Expect(err).NotTo(HaveOccurred())
			Expect(pub.Equal(fedPub)).To(BeTrue())
			Expect(*r.TLogRecordPublicKeyPEM).To(Equal(r.FederationPublicKeyPEM))
		}
	})

	It("keeps, with since, the receipts of anchors after it, and refuses a malformed since", func() {
		a := doAuth(s, http.MethodGet, "/receipts?since=anchor-20261103-001", bearer(alice.key, nil), nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(anchorIDs(a)).To(Equal([]string{"anchor-20261103-002"}))
		a = doAuth(s, http.MethodGet, "/receipts?since=anchor-20261103-002", bearer(alice.key, nil), nil)
		Expect(anchorIDs(a)).To(BeEmpty())
		for _, since := range []string{"yesterday", "anchor-2026110-001", "anchor_20261103T000000Z_9224cd"} {
			a = doAuth(s, http.MethodGet, "/receipts?since="+since, bearer(alice.key, nil), nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), since)
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_anchor_id"))
		}
	})

	It("pages with limit and page_token", func() {
		a := doAuth(s, http.MethodGet, "/receipts?limit=1", bearer(alice.key, nil), nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(anchorIDs(a)).To(Equal([]string{"anchor-20261103-002"}))
		tok, ok := a.body["next_page_token"].(string)
		Expect(ok).To(BeTrue(), string(a.raw))
		a = doAuth(s, http.MethodGet, "/receipts?limit=1&page_token="+tok, bearer(alice.key, nil), nil)
		Expect(anchorIDs(a)).To(Equal([]string{"anchor-20261103-001"}))
		Expect(a.body).To(HaveKeyWithValue("next_page_token", BeNil()))
		for _, q := range []string{"limit=0", "limit=1001", "page_token=%21"} {
			a = doAuth(s, http.MethodGet, "/receipts?"+q, bearer(alice.key, nil), nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), q)
		}
	})

	It("serves no receipt of an anchor whose status names a log entry the log's proof does not back: 503, never pending", func() {
		// The attack: whoever can write status moves the log index; a receipt must not
		// carry, signed, a log entry nothing proved. Nor may it fall back to the pending
		// receipt: the anchor's logged receipt may have been served before (issue 33).
		ca := logged(f.anchorOver("anchor-20261103-005", f.signingKey(), f.submission("receipts-alice-1")))
		moved := ca.DeepCopy()
		moved.Status.LogEntry.LogIndex += 1000
		Expect(k8sClient.Status().Update(ctx, moved)).To(Succeed())
		Eventually(func(g Gomega) {
			a := doAuth(s, http.MethodGet, "/receipts?since=anchor-20261103-004", bearer(alice.key, nil), nil)
			g.Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
			g.Expect(a.body).To(HaveKeyWithValue("error", "receipt_log_unverifiable"))
			g.Expect(a.body).To(HaveKeyWithValue("anchor_id", "anchor-20261103-005"))
			g.Expect(a.header.Get("Retry-After")).To(MatchRegexp(`^[1-9][0-9]*$`))
			g.Expect(string(a.raw)).NotTo(ContainSubstring("tlog_entry"))
		}).Should(Succeed())
		var back fv1.CrossAnchor
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ca), &back)).To(Succeed())
		back.Status.LogEntry.LogIndex = ca.Status.LogEntry.LogIndex
		Expect(k8sClient.Status().Update(ctx, &back)).To(Succeed())
		Eventually(func(g Gomega) {
			a := doAuth(s, http.MethodGet, "/receipts?since=anchor-20261103-004", bearer(alice.key, nil), nil)
			g.Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		}).Should(Succeed())
		a := doAuth(s, http.MethodGet, "/receipts?since=anchor-20261103-004", bearer(alice.key, nil), nil)
		Expect(anchorIDs(a)).To(Equal([]string{"anchor-20261103-005"}), "the logged receipt again")
	})

	It("still answers a withdrawn operator its receipts", func() {
		a := postBody(withdrawnServer, "/federation/withdraw", protocol.NewWithdrawal(bob.key, time.Now()))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Eventually(func(g Gomega) {
			b := doAuth(s, http.MethodGet, "/receipts", bearer(bob.key, nil), nil)
			g.Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
			g.Expect(strings.Join(anchorIDs(b), " ")).To(Equal("anchor-20261103-003 anchor-20261103-001"))
		}).Should(Succeed())
	})
})
