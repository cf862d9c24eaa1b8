package webhook

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func marshalPub(key ed25519.PrivateKey) (string, error) {
	text, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	return string(text), err
}

// signRaw signs msg's bytes whatever its form, as an attacker's client would.
func signRaw(key ed25519.PrivateKey, msg string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(msg)))
}

func proofOf(key ed25519.PrivateKey, org string) string { return protocol.SignRegistration(key, org) }

// tamper flips one character of the nonce at position i from its end.
func tamper(nonce string, fromEnd int) string {
	b := []byte(nonce)
	i := len(b) - fromEnd
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

var _ = Describe("Registration challenges", func() {
	It("issues a nonce of the challenge grammar that no two requests share", func() {
		s := newServer(Options{})
		a, b := challenge(s), challenge(s)
		Expect(protocol.IsChallenge(a)).To(BeTrue(), a)
		Expect(a).To(MatchRegexp(`^cairn-challenge:[A-Za-z0-9_-]{75}$`))
		Expect(a).NotTo(Equal(b))
	})

	It("accepts on one replica a challenge another issued", func() {
		a := do(newReplica(Options{}), http.MethodPost, "/federation/register", newRegistrant("Cross Replica").body(challenge(newServer(Options{}))))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	})

	It("refuses a challenge used before, also on another replica", func() {
		replica1, replica2 := newServer(Options{}), newReplica(Options{})
		nonce := challenge(replica1)
		first := do(replica1, http.MethodPost, "/federation/register", newRegistrant("Replay One").body(nonce))
		Expect(first.status).To(Equal(http.StatusOK), string(first.raw))

		By("replaying the nonce, signed by another key, on the same replica and on another")
		for _, s := range []*Server{replica1, replica2} {
			again := do(s, http.MethodPost, "/federation/register", newRegistrant("Replay Two").body(nonce))
			Expect(again.status).To(Equal(http.StatusUnauthorized), string(again.raw))
			Expect(again.body["error"]).To(Equal("challenge_replayed"))
		}
	})

	It("refuses an expired challenge", func() {
		s := newServer(Options{})
		nonce := challenge(s)
		later := newServer(Options{Now: func() time.Time { return time.Now().Add(ChallengeLifetime + time.Second) }})
		a := do(later, http.MethodPost, "/federation/register", newRegistrant("Late Org").body(nonce))
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal("challenge_expired"))
	})

	It("refuses a challenge whose MAC or expiry was changed, or that another key MACed", func() {
		s := newServer(Options{})
		nonce := challenge(s)
		// The MAC is the last 43 characters; the expiry sits before it.
		forged := []string{tamper(nonce, 1), tamper(nonce, 20), tamper(nonce, 50)}
		other, err := mintChallenge(make([]byte, 32), time.Now())
		Expect(err).NotTo(HaveOccurred())
		forged = append(forged, other)
		for _, n := range forged {
			a := do(s, http.MethodPost, "/federation/register", newRegistrant("Forger").body(n))
			Expect(a.status).To(Equal(http.StatusUnauthorized), n)
			Expect(a.body["error"]).To(Equal("invalid_challenge"))
			Expect(string(a.raw)).NotTo(ContainSubstring(nonce[len(nonce)-43:]), "the answer shows the MAC that would pass")
		}
	})

	It("refuses a nonce that is not a challenge, such as the seed's 32 hex or a registration message", func() {
		s := newServer(Options{})
		for _, n := range []string{"0123456789abcdef0123456789abcdef", "register Acme " + strings.Repeat("ab", 32), "cairn-challenge:short"} {
			a := do(s, http.MethodPost, "/federation/register", newRegistrant("Other Form").body(n))
			Expect(a.status).To(Equal(http.StatusUnauthorized), n)
			Expect(a.body["error"]).To(Equal("invalid_challenge"))
		}
	})

	It("deletes used-challenge records once they expire, and keeps the others", func() {
		s := newServer(Options{})
		expired, live := challenge(s), challenge(s)
		Expect(s.useChallenge(ctx, expired, "", "", time.Now().Add(-time.Second))).To(Succeed())
		Expect(s.useChallenge(ctx, live, "", "", time.Now().Add(time.Minute))).To(Succeed())
		n, err := s.collectUsedChallenges(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 1))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, recordKey(expired), &corev1.ConfigMap{}))).To(BeTrue())
		Expect(k8sClient.Get(ctx, recordKey(live), &corev1.ConfigMap{})).To(Succeed())
	})
})

// recordKey names the used-challenge record of nonce.
func recordKey(nonce string) client.ObjectKey {
	cm := federation.UsedChallenge(fedKey.Namespace, nonce, "", "", time.Time{})
	return client.ObjectKeyFromObject(cm)
}
