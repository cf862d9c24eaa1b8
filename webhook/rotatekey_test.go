package webhook

import (
	"crypto/ed25519"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

var _ = Describe("POST /federation/rotate-key", func() {
	It("refuses a missing or forged old-key signature, and a forged new-key one, with 401", func() {
		s := newServer(Options{})
		r, next, other := registered(s, "Forged Rotation Org"), newRegistrant("Next"), newRegistrant("Mallory")
		kr := rotation(r.key, next.key)
		msg := string(protocol.RotationMessage(kr.NewPublicKey, kr.RotationAt))
		for name, forge := range map[string]func(*protocol.KeyRotation){
			"old missing": func(k *protocol.KeyRotation) { k.OldKeySignature = "" },
			"old forged":  func(k *protocol.KeyRotation) { k.OldKeySignature = signRaw(other.key, msg) },
			"new forged":  func(k *protocol.KeyRotation) { k.NewKeySignature = signRaw(other.key, msg) },
			"new missing": func(k *protocol.KeyRotation) { k.NewKeySignature = "" },
		} {
			bad := kr
			forge(&bad)
			a := postBody(s, "/federation/rotate-key", bad)
			Expect(a.status).To(Equal(http.StatusUnauthorized), name+": "+string(a.raw))
			Expect(a.body["error"]).To(Equal("invalid_signature"), name)
		}
		Expect(operatorOf(r).Status.KeyHistory).To(HaveLen(1))
	})

	It("refuses a new key another operator holds with 409, before writing anything", func() {
		s := newServer(Options{})
		r, taken := registered(s, "Greedy Org"), registered(s, "Holder Org")
		a := postBody(s, "/federation/rotate-key", rotation(r.key, taken.key))
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("key_already_registered"))
		Expect(a.body["operator_id"]).To(Equal(protocol.OperatorID(taken.key.Public().(ed25519.PublicKey))))
		fo := operatorOf(r)
		Expect(fo.Status.KeyHistory).To(HaveLen(1))
		Expect(fo.Spec.KeyRotation).To(BeNil())
	})

	It("refuses a stale rotation_at with 400 and an unknown operator with 404", func() {
		s := newServer(Options{})
		r, next := registered(s, "Stale Rotation Org"), newRegistrant("Next")
		kr, err := protocol.NewKeyRotation(r.key, next.key, time.Now().Add(-6*time.Minute))
		Expect(err).NotTo(HaveOccurred())
		a := postBody(s, "/federation/rotate-key", kr)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("time_out_of_window"))
		Expect(a.body["field"]).To(Equal("rotation_at"))

		a = postBody(s, "/federation/rotate-key", rotation(newRegistrant("Nobody").key, next.key))
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_not_found"))
	})

	It("refuses a rotation after a withdrawal with 403", func() {
		s := newServer(Options{})
		r := registered(s, "Gone Org")
		Expect(postBody(s, "/federation/withdraw", protocol.NewWithdrawal(r.key, time.Now())).status).To(Equal(http.StatusOK))
		a := postBody(s, "/federation/rotate-key", rotation(r.key, newRegistrant("Next").key))
		Expect(a.status).To(Equal(http.StatusForbidden), string(a.raw))
		Expect(a.body["error"]).To(Equal("operator_withdrawn"))
	})

	It("rotates the key the controller verified and logged, keeping the operator ID, twice", func() {
		s := newServer(Options{})
		r, next, third := registered(s, "Rotating Org"), newRegistrant("Next"), newRegistrant("Third")
		id := protocol.OperatorID(r.key.Public().(ed25519.PublicKey))
		kr := rotation(r.key, next.key)
		a := postBody(s, "/federation/rotate-key", kr)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("operator_id", id))
		Expect(a.body).To(HaveKeyWithValue("new_public_key", kr.NewPublicKey))
		Expect(a.body).To(HaveKey("rotated_at"))
		Expect(a.body).To(HaveKey("tlog_log_index"))

		fo := operatorOf(r)
		Expect(string(fo.Status.OperatorID)).To(Equal(id))
		Expect(fo.Status.KeyHistory).To(HaveLen(2))
		Expect(string(fo.Status.KeyHistory[1].PublicKeyPEM)).To(Equal(kr.NewPublicKey))
		Expect(fo.Status.KeyHistory[0].ValidUntil).NotTo(BeNil())
		Expect(a.body["tlog_log_index"]).To(BeNumerically("==", fo.Status.KeyHistory[1].LogEntry.LogIndex))

		By("authenticating as the operator, whose tokens now name its ID and are signed by the new key")
		as := func(key ed25519.PrivateKey, opID string) answer {
			nonce := protocol.BodyNonce(time.Now(), nil)
			tok := protocol.Token{OperatorID: opID, Nonce: nonce, Signature: ed25519.Sign(key, []byte(nonce))}
			return doAuth(s, http.MethodGet, "/receipts", "Bearer "+tok.String(), nil)
		}
		Eventually(func() int { return as(next.key, id).status }).Should(Equal(http.StatusOK), "the new key speaks for the operator")
		old := as(r.key, id)
		Expect(old.status).To(Equal(http.StatusUnauthorized), string(old.raw))
		Expect(old.body).To(HaveKeyWithValue("error", "invalid_token"), "the old key no longer does")
		own := as(next.key, protocol.OperatorID(next.key.Public().(ed25519.PublicKey)))
		Expect(own.body).To(HaveKeyWithValue("error", "unknown_operator"), "the new key's own ID names no operator")

		By("replaying the rotation: the new key is the current one now")
		a = postBody(s, "/federation/rotate-key", kr)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body["error"]).To(Equal("invalid_public_key"))
		Expect(operatorOf(r).Status.KeyHistory).To(HaveLen(2))

		By("rotating again from the new key, and back to the first, which is refused")
		again := rotation(next.key, third.key)
		again.OperatorID = id
		a = postBody(s, "/federation/rotate-key", again)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(operatorOf(r).Status.KeyHistory).To(HaveLen(3))
		back := rotation(third.key, r.key)
		back.OperatorID = id
		a = postBody(s, "/federation/rotate-key", back)
		Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
		Expect(a.body["error"]).To(Equal("key_already_registered"))
	})
})

// rotation is the rotation from oldKey to newKey dated now.
func rotation(oldKey, newKey ed25519.PrivateKey) protocol.KeyRotation {
	GinkgoHelper()
	kr, err := protocol.NewKeyRotation(oldKey, newKey, time.Now())
	Expect(err).NotTo(HaveOccurred())
	return kr
}
