package webhook

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Issue 33, "Records that say more than was proven": what GET /federation/operator/{id}
// and the public page show of an operator (its name, contact and key) is each backed by a
// proof, whatever a namespace user writes into a spec.
// The suite runs without the admission webhooks: the controller and the API are the walls.

// observed waits until the manager's cache holds written (just updated) and the
// controller has reconciled its generation.
func observed(written *fv1.FederationOperator) *fv1.FederationOperator {
	GinkgoHelper()
	var fo fv1.FederationOperator
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(written), &fo)).To(Succeed())
		g.Expect(fo.Generation).To(BeNumerically(">=", written.Generation))
		g.Expect(fo.Status.ObservedGeneration).To(Equal(fo.Generation))
	}).Should(Succeed())
	return &fo
}

// operatorShown is what GET /federation/operator/{id} answers of id.
func operatorShown(s *Server, id string) map[string]any {
	GinkgoHelper()
	a := do(s, http.MethodGet, "/federation/operator/"+id, nil)
	Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	return a.body
}

// operatorObjectKey is the FederationOperator the API made for r in f's namespace.
func operatorObjectKey(f readFederation, r registrant) client.ObjectKey {
	return client.ObjectKey{Namespace: f.key.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}
}

var _ = Describe("records that say more than was proven (issue 33)", Ordered, ContinueOnFailure, func() {
	var (
		f  readFederation
		s  *Server
		r  registrant
		id string
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.server()
		r = newRegistrant("Honest Org")
		id = f.register(s, r)
	})

	shown := func() map[string]any { return operatorShown(s, id) }

	It("shows no name, contact or key that a namespace user wrote into the spec", func() {
		before := shown()
		Expect(before).To(HaveKeyWithValue("org_name", "Honest Org"))
		key := operatorObjectKey(f, r)
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, key, &fo)).To(Succeed())
		fo.Spec.OrgName, fo.Spec.Contact = "Evil Corp", "evil@example.org"
		Expect(k8sClient.Update(ctx, &fo)).To(Succeed())
		observed(&fo)

		after := shown()
		for _, member := range []string{"org_name", "contact_email", "public_key_pem"} {
			Expect(after[member]).To(Equal(before[member]), member+": a spec edit no proof signs")
		}
		page := do(s, http.MethodGet, "/", nil)
		Expect(page.status).To(Equal(http.StatusOK))
		Expect(string(page.raw)).To(ContainSubstring("Honest Org"))
		Expect(string(page.raw)).NotTo(ContainSubstring("Evil Corp"))
	})

	It("shows the key the controller accepted, not a rotation it refused", func() {
		before := shown()
		_, attacker, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		pemText, err := marshalPub(attacker)
		Expect(err).NotTo(HaveOccurred())
		key := operatorObjectKey(f, r)
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, key, &fo)).To(Succeed())
		fo.Spec.PublicKeyPEM = fv1.PublicKeyPEM(pemText) // no keyRotation: the controller refuses it
		Expect(k8sClient.Update(ctx, &fo)).To(Succeed())
		got := observed(&fo)
		Expect(federation.CurrentKey(got).PublicKeyPEM).To(Equal(fv1.PublicKeyPEM(before["public_key_pem"].(string))), "the controller kept the key")

		after := shown()
		Expect(after["public_key_pem"]).To(Equal(before["public_key_pem"]))
		Expect(after["public_key_pem"]).NotTo(Equal(pemText))
	})
})

var _ = Describe("POST /federation/rename", Ordered, func() {
	var (
		f  readFederation
		s  *Server
		r  registrant
		id string
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.server()
		r = newRegistrant("Rename Org")
		id = f.register(s, r)
	})

	shown := func() map[string]any { return operatorShown(s, id) }

	It("shows the contact the registration's rename signs", func() {
		Expect(shown()).To(HaveKeyWithValue("contact_email", "ops@example.org"))
	})

	It("renames the operator once the controller applied and logged the signed rename", func() {
		rn, err := protocol.NewRename(r.key, id, "Rename Org Ltd", "security@rename.example", time.Now().Add(time.Second)) // after the registration's, to the second
		Expect(err).NotTo(HaveOccurred())
		a := postBody(s, "/federation/rename", rn)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("org_name", "Rename Org Ltd"))
		Expect(a.body).To(HaveKeyWithValue("contact", "security@rename.example"))
		Expect(a.body).To(HaveKeyWithValue("renamed_at", rn.At))
		Expect(a.body).To(HaveKeyWithValue("tlog_log_index", BeNumerically(">", 0)))
		after := shown()
		Expect(after).To(HaveKeyWithValue("org_name", "Rename Org Ltd"))
		Expect(after).To(HaveKeyWithValue("contact_email", "security@rename.example"))
		page := do(s, http.MethodGet, "/", nil)
		Expect(string(page.raw)).To(ContainSubstring("Rename Org Ltd"))
	})

	It("refuses a rename another key signed (401) and an older one sent again (400), and shows no change", func() {
		_, stranger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		forged, err := protocol.NewRename(stranger, id, "Evil Corp", "evil@example.org", time.Now())
		Expect(err).NotTo(HaveOccurred())
		a := postBody(s, "/federation/rename", forged)
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "invalid_signature"))

		older, err := protocol.NewRename(r.key, id, "Rename Org (old)", "", time.Now().Add(-2*time.Minute))
		Expect(err).NotTo(HaveOccurred())
		a = postBody(s, "/federation/rename", older)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "invalid_rename"))

		stale, err := protocol.NewRename(r.key, id, "Rename Org (stale)", "", time.Now().Add(-10*time.Minute))
		Expect(err).NotTo(HaveOccurred())
		a = postBody(s, "/federation/rename", stale)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "time_out_of_window"))
		Expect(shown()).To(HaveKeyWithValue("org_name", "Rename Org Ltd"))
	})

	It("shows no contact for a registration that does not sign one", func() {
		plain := newRegistrant("Plain Org")
		pemText, err := marshalPub(plain.key)
		Expect(err).NotTo(HaveOccurred())
		nonce := challenge(s)
		b, err := json.Marshal(registerRequest{PublicKeyPEM: pemText, OrgName: plain.org, ContactEmail: "unsigned@example.org",
			Nonce: nonce, NonceSignature: signRaw(plain.key, nonce), ProofOfPossession: proofOf(plain.key, plain.org)})
		Expect(err).NotTo(HaveOccurred())
		a := do(s, http.MethodPost, "/federation/register", b)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("org_name", "Plain Org"))
		Expect(a.body).To(HaveKeyWithValue("contact_email", ""), "the proof of possession does not sign the contact")
	})
})
