package webhook

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("POST /federation/register", func() {
	It("registers an operator the controller verified and logged, with the seed's fields", func() {
		s := newServer(Options{})
		r := newRegistrant("Acme Research")
		a := do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		id := protocol.OperatorID(r.key.Public().(ed25519.PublicKey))
		Expect(a.body).To(HaveKeyWithValue("operator_id", id))
		Expect(a.body).To(HaveKeyWithValue("org_name", "Acme Research"))
		Expect(a.body).To(HaveKeyWithValue("contact_email", "ops@example.org"))
		Expect(a.body).To(HaveKey("tlog_log_index"))
		registeredAt, err := time.Parse(time.RFC3339, a.body["registered_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(registeredAt).To(BeTemporally("~", time.Now(), time.Minute))

		By("reading the operator the controller made Active")
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fedKey.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
		Expect(fo.Status.Phase).To(Equal(fv1.PhaseActive))
		Expect(string(fo.Status.OperatorID)).To(Equal(id))
		Expect(fo.Status.RegistrationLogEntry).NotTo(BeNil())
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.RegistrationLogEntry.LogIndex))
	})

	It("refuses a key an operator holds with 409 key_already_registered", func() {
		s := newServer(Options{})
		r := newRegistrant("Twice Org")
		Expect(do(s, http.MethodPost, "/federation/register", r.body(challenge(s))).status).To(Equal(http.StatusOK))
		r.org = "Twice Org Renamed"
		a := do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("key_already_registered"))
		Expect(a.body["operator_id"]).To(Equal(protocol.OperatorID(r.key.Public().(ed25519.PublicKey))))
	})

	It("answers 504 registration_pending when the controller is not done in time, and 409 once it is", func() {
		impatient := newServer(Options{RegisterTimeout: time.Millisecond})
		r := newRegistrant("Slow Org")
		a := do(impatient, http.MethodPost, "/federation/register", r.body(challenge(impatient)))
		Expect(a.status).To(Equal(http.StatusGatewayTimeout), string(a.raw))
		Expect(a.body["error"]).To(Equal("registration_pending"))

		var fo fv1.FederationOperator
		name := client.ObjectKey{Namespace: fedKey.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, name, &fo)).To(Succeed())
			g.Expect(fo.Status.RegistrationLogEntry).NotTo(BeNil())
		}).Should(Succeed())
		s := newServer(Options{})
		a = do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
	})

	It("refuses a key a kubectl-applied operator holds, before creating anything", func() {
		s := newServer(Options{})
		r := newRegistrant("GitOps Org")
		pemText, err := marshalPub(r.key)
		Expect(err).NotTo(HaveOccurred())
		applied := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: fedKey.Namespace, Name: "gitops-org"},
			Spec: fv1.FederationOperatorSpec{OrgName: r.org, PublicKeyPEM: fv1.PublicKeyPEM(pemText),
				ProofOfPossession: fv1.Signature(proofOf(r.key, r.org))}}
		Expect(k8sClient.Create(ctx, applied)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(applied), applied)).To(Succeed())
			g.Expect(applied.Status.Phase).To(Equal(fv1.PhaseActive))
		}).Should(Succeed())

		nonce := challenge(s)
		a := do(s, http.MethodPost, "/federation/register", r.body(nonce))
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("key_already_registered"))
		name := operatorObjectName(r.key.Public().(ed25519.PublicKey))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: fedKey.Namespace, Name: name}, &fv1.FederationOperator{}))).
			To(BeTrue(), "the API created an operator for a key another operator holds")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, recordKey(nonce), &corev1.ConfigMap{}))).
			To(BeTrue(), "a refused registration used up its challenge")
	})

	It("refuses a signature by another key, a proof for another org and a small-order key", func() {
		s := newServer(Options{})
		r, other := newRegistrant("Honest Org"), newRegistrant("Other Org")
		var req registerRequest

		Expect(json.Unmarshal(r.body(challenge(s)), &req)).To(Succeed())
		req.NonceSignature = signRaw(other.key, req.Nonce)
		a := postJSON(s, req)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_signature"))

		Expect(json.Unmarshal(r.body(challenge(s)), &req)).To(Succeed())
		req.ProofOfPossession = proofOf(r.key, "Another Name")
		a = postJSON(s, req)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_proof_of_possession"))

		// The identity point: under it R = identity, S = 0 verifies every message.
		identity := make([]byte, 32)
		identity[0] = 1
		pemText, err := protocol.MarshalPublicKeyPEM(identity)
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(r.body(challenge(s)), &req)).To(Succeed())
		req.PublicKeyPEM = string(pemText)
		req.NonceSignature = "AQ" + strings.Repeat("A", 84) + "=="
		a = postJSON(s, req)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_public_key"))
	})

	It("answers 400 to malformed JSON and to missing fields, naming them", func() {
		s := newServer(Options{})
		for _, body := range []string{`{"org_name":`, `[1,2]`, `{"org_name":"a"} {}`, ``} {
			a := do(s, http.MethodPost, "/federation/register", []byte(body))
			Expect(a.status).To(Equal(http.StatusBadRequest), body)
			Expect(a.body["error"]).To(Equal("malformed_json"))
			Expect(a.body).To(HaveKey("message"))
		}
		a := do(s, http.MethodPost, "/federation/register", []byte(`{"org_name":"a","nonce":"n"}`))
		Expect(a.status).To(Equal(http.StatusBadRequest))
		Expect(a.body["error"]).To(Equal("missing_fields"))
		Expect(a.body["fields"]).To(Equal([]any{"nonce_signature", "public_key_pem"}), "proof_of_possession is optional")
	})

	It("answers 413 to a body over the limit", func() {
		s := newServer(Options{MaxBodyBytes: 1024})
		a := do(s, http.MethodPost, "/federation/register", []byte(`{"org_name":"`+strings.Repeat("x", 2048)+`"}`))
		Expect(a.status).To(Equal(http.StatusRequestEntityTooLarge), string(a.raw))
		Expect(a.body["error"]).To(Equal("body_too_large"))
	})

	It("answers 429 with Retry-After past the per-address rate limit", func() {
		now := time.Now()
		s := newServer(Options{RatePerSecond: 0.5, RateBurst: 2, Now: func() time.Time { return now }})
		for range 2 {
			Expect(do(s, http.MethodGet, "/federation/openapi.json", nil).status).To(Equal(http.StatusOK))
		}
		a := do(s, http.MethodGet, "/federation/register/challenge", nil)
		Expect(a.status).To(Equal(http.StatusTooManyRequests))
		Expect(a.body["error"]).To(Equal("rate_limited"))
		Expect(a.header.Get("Retry-After")).To(Equal("2"))
	})

	It("answers 503 when the API server cannot be reached", func() {
		// A client of an API server that is not there: every request fails to connect.
		dead, err := client.New(&rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second},
			client.Options{Scheme: newScheme(), Mapper: mgr.GetRESTMapper()})
		Expect(err).NotTo(HaveOccurred())
		s, err := New(Options{Client: dead, APIReader: dead, Informers: noInformers(), Federation: fedKey, RatePerSecond: -1})
		Expect(err).NotTo(HaveOccurred())
		for _, path := range []string{"/federation/register/challenge", "/federation/status"} {
			a := do(s, http.MethodGet, path, nil)
			Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
			Expect(a.body["error"]).To(Equal("api_server_unavailable"))
		}
	})
})

// postJSON posts req to /federation/register.
func postJSON(s *Server, req registerRequest) answer {
	GinkgoHelper()
	b, err := json.Marshal(req)
	Expect(err).NotTo(HaveOccurred())
	return do(s, http.MethodPost, "/federation/register", b)
}
