package webhook

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// seedBody is the registration of r with nonce as the seed's table states it: no
// proof_of_possession, no rename.
func (r registrant) seedBody(nonce string) []byte {
	GinkgoHelper()
	pemText, err := marshalPub(r.key)
	Expect(err).NotTo(HaveOccurred())
	b, err := json.Marshal(map[string]string{"public_key_pem": pemText, "org_name": r.org, "contact_email": "ops@example.org",
		"nonce": nonce, "nonce_signature": signRaw(r.key, nonce)})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// appliedWithChallenge creates, as kubectl apply would, an operator of r's key named name
// for org, whose proof is the challenge nonce signed by signer; it returns the Ready
// condition's message once the controller rejected it, and fails if it registered.
func appliedWithChallenge(r registrant, signer ed25519.PrivateKey, name, org, nonce string) string {
	GinkgoHelper()
	pemText, err := marshalPub(r.key)
	Expect(err).NotTo(HaveOccurred())
	fo := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: fedKey.Namespace, Name: name},
		Spec: fv1.FederationOperatorSpec{OrgName: org, PublicKeyPEM: fv1.PublicKeyPEM(pemText),
			ChallengeProof: &fv1.ChallengeProof{Nonce: nonce, Signature: fv1.Signature(signRaw(signer, nonce))}}}
	Expect(k8sClient.Create(ctx, fo)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(fo), fo)).To(Succeed())
		g.Expect(fo.Status.Phase).To(Equal(fv1.PhaseRejected))
	}).Should(Succeed())
	Expect(fo.Status.RegisteredAt).To(BeNil())
	msg, reason := readyCondition(fo)
	Expect(reason).To(Equal(fv1.ReasonSignatureInvalid))
	return msg
}

// takeChallenge records nonce as the API records a challenge it took for the
// registration of r's key with org, whose operator it then failed to create.
func takeChallenge(r registrant, org, nonce string, expiry time.Time) {
	GinkgoHelper()
	s := newServer(Options{})
	Expect(s.useChallenge(ctx, nonce, operatorObjectName(r.key.Public().(ed25519.PublicKey)), org, expiry)).To(Succeed())
}

var _ = Describe("POST /federation/register with the seed's body alone", func() {
	It("registers: the signed challenge is the operator's proof, which the controller verifies", func() {
		s := newServer(Options{})
		r := newRegistrant("Seed Client Org")
		nonce := challenge(s)
		a := do(s, http.MethodPost, "/federation/register", r.seedBody(nonce))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		id := protocol.OperatorID(r.key.Public().(ed25519.PublicKey))
		Expect(a.body).To(HaveKeyWithValue("operator_id", id))
		Expect(a.body).To(HaveKeyWithValue("org_name", "Seed Client Org"))
		Expect(a.body["tlog_log_index"]).To(BeNumerically(">=", 0))
		Expect(a.body["registered_at"]).To(BeAssignableToTypeOf(""))

		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fedKey.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
		Expect(fo.Spec.ProofOfPossession).To(BeEmpty())
		Expect(fo.Spec.ChallengeProof).To(Equal(&fv1.ChallengeProof{Nonce: nonce, Signature: fv1.Signature(signRaw(r.key, nonce))}))
		Expect(fo.Status.Phase).To(Equal(fv1.PhaseActive))
		org, _, ok := federation.ShownOrganization(&fo)
		Expect(ok).To(BeTrue())
		Expect(org).To(Equal("Seed Client Org"))

		By("the same challenge again, signed by another key: it served once")
		a = do(s, http.MethodPost, "/federation/register", newRegistrant("Second Comer").seedBody(nonce))
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal("challenge_replayed"))
	})

	It("still takes proof_of_possession, which is then the proof", func() {
		s := newServer(Options{})
		r := newRegistrant("Both Proofs Org")
		var req map[string]string
		Expect(json.Unmarshal(r.seedBody(challenge(s)), &req)).To(Succeed())
		req["proof_of_possession"] = proofOf(r.key, r.org)
		b, err := json.Marshal(req)
		Expect(err).NotTo(HaveOccurred())
		a := do(s, http.MethodPost, "/federation/register", b)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fedKey.Namespace, Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
		Expect(fo.Spec.ProofOfPossession).To(Equal(fv1.Signature(proofOf(r.key, r.org))))
		Expect(fo.Spec.ChallengeProof).To(BeNil())
	})

	It("refuses, in the controller, a challenge proof replayed for another org or object, never taken, not issued, expired or forged", func() {
		s := newServer(Options{})
		key, err := federation.ChallengeKey(ctx, k8sClient, federationOf(fedKey))
		Expect(err).NotTo(HaveOccurred())

		By("captured from a registration the API took for Victim Org and failed to finish, applied for another org")
		victim := newRegistrant("Victim Org")
		nonce := challenge(s)
		takeChallenge(victim, victim.org, nonce, time.Now().Add(ChallengeLifetime))
		Expect(appliedWithChallenge(victim, victim.key, operatorObjectName(victim.key.Public().(ed25519.PublicKey)), "Mallory Inc", nonce)).
			To(ContainSubstring("took this challenge for another registration"))

		By("the same, for the same org under another object name")
		victim2 := newRegistrant("Victim Two")
		nonce = challenge(s)
		takeChallenge(victim2, victim2.org, nonce, time.Now().Add(ChallengeLifetime))
		Expect(appliedWithChallenge(victim2, victim2.key, "mallory-copy", victim2.org, nonce)).
			To(ContainSubstring("took this challenge for another registration"))

		By("a challenge the API never took")
		r := newRegistrant("Never Taken")
		Expect(appliedWithChallenge(r, r.key, "never-taken", r.org, challenge(s))).To(ContainSubstring("did not take this challenge"))

		By("a nonce of the challenge form that the federation did not issue")
		r = newRegistrant("Self Made")
		selfMade := protocol.ChallengePrefix + strings.Repeat("A", 75)
		takeChallenge(r, r.org, selfMade, time.Now().Add(time.Minute))
		Expect(appliedWithChallenge(r, r.key, operatorObjectName(r.key.Public().(ed25519.PublicKey)), r.org, selfMade)).
			To(ContainSubstring("not a challenge this federation issued"))

		By("a challenge that expired before the operator was created")
		r = newRegistrant("Too Late")
		expired, err := federation.MintChallenge(key, time.Now().Add(-time.Minute))
		Expect(err).NotTo(HaveOccurred())
		takeChallenge(r, r.org, expired, time.Now().Add(time.Minute))
		Expect(appliedWithChallenge(r, r.key, operatorObjectName(r.key.Public().(ed25519.PublicKey)), r.org, expired)).
			To(ContainSubstring("expired"))

		By("a challenge signed by another key")
		r, other := newRegistrant("Forged"), newRegistrant("Other")
		nonce = challenge(s)
		takeChallenge(r, r.org, nonce, time.Now().Add(ChallengeLifetime))
		Expect(appliedWithChallenge(r, other.key, operatorObjectName(r.key.Public().(ed25519.PublicKey)), r.org, nonce)).
			To(ContainSubstring("challengeProof"))
	})
})
