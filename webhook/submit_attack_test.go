package webhook

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The attacks on POST /federation/submit: each must be refused with its documented
// answer, and none may leave a Submission behind.
var _ = Describe("POST /federation/submit refuses", func() {
	var (
		s    *Server
		r    registrant
		c    *chain
		body []byte
	)
	BeforeEach(func() {
		s = submitServer(Options{})
		r = registered(s, "Target Org")
		c = newChain(r.key, "target", 10)
		body = c.export(1, 10, exportTime())
	})
	AfterEach(func() {
		Expect(submissionsOf(idOf(r))).To(BeEmpty(), "a refused request leaves no Submission")
	})

	tokenRefused := func(a answer, code string) {
		GinkgoHelper()
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body["error"]).To(Equal(code))
		Expect(a.header.Get("WWW-Authenticate")).To(HavePrefix("Bearer "))
		Expect(string(a.raw)).NotTo(ContainSubstring(protocol.BodyNonce(time.Now(), body)[11:]), "the body's hash is not echoed")
	}

	It("a request without a token", func() {
		tokenRefused(submitAs(s, "", body), "missing_token")
	})

	It("a malformed token", func() {
		tokenRefused(submitAs(s, "Bearer not-a-token", body), "invalid_token")
		tokenRefused(submitAs(s, "Basic "+idOf(r)+":secret", body), "invalid_token")
	})

	It("a signed token without the Bearer scheme, or with two spaces after it", func() {
		bare := bodyToken(r.key, body)[len("Bearer "):]
		tokenRefused(submitAs(s, bare, body), "invalid_token")
		tokenRefused(submitAs(s, "Bearer  "+bare, body), "invalid_token")
	})

	It("a token signed by another key in the operator's name", func() {
		_, other, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		nonce := protocol.BodyNonce(time.Now(), body)
		forged := (&protocol.Token{OperatorID: idOf(r), Nonce: nonce, Signature: ed25519.Sign(other, []byte(nonce))}).String()
		tokenRefused(submitAs(s, "Bearer "+forged, body), "invalid_token")
	})

	It("a token of an operator that is not registered", func() {
		stranger := newRegistrant("Stranger Org")
		tokenRefused(submitAs(s, bodyToken(stranger.key, body), body), "unknown_operator")
	})

	It("a token that binds another body", func() {
		other := c.export(1, 9, exportTime())
		tokenRefused(submitAs(s, bodyToken(r.key, other), body), "invalid_token")
	})

	It("a malformed body under a token that binds another body, as a token error", func() {
		tokenRefused(submitAs(s, bodyToken(r.key, body), []byte("{not json")), "invalid_token")
	})

	It("a token dated more than five minutes away, either way", func() {
		tokenRefused(submitAs(s, bodyTokenAt(r.key, body, time.Now().Add(-6*time.Minute)), body), "token_expired")
		tokenRefused(submitAs(s, bodyTokenAt(r.key, body, time.Now().Add(6*time.Minute)), body), "token_expired")
	})

	It("a challenge token used a second time", func() {
		tok, err := protocol.SignToken(r.key, challenge(s))
		Expect(err).NotTo(HaveOccurred())
		bad := []byte("{not json") // the first use spends the challenge whatever the body
		first := submitAs(s, "Bearer "+tok, bad)
		Expect(first.status).To(Equal(http.StatusBadRequest), string(first.raw))
		tokenRefused(submitAs(s, "Bearer "+tok, body), "token_replayed")
	})

	It("a body over the limit, mid-stream, with 413", func() {
		small := submitServer(Options{MaxBodyBytes: int64(len(body) / 2)})
		a := submit(small, r.key, body)
		Expect(a.status).To(Equal(http.StatusRequestEntityTooLarge), string(a.raw))
		Expect(a.body["error"]).To(Equal("body_too_large"))
	})

	It("a body that is not JSON, or not an export, with 400 malformed_json", func() {
		for _, bad := range [][]byte{[]byte("{not json"), []byte(`{"format":"cairn-chain-v2"}`), append(append([]byte{}, body...), []byte(" {}")...)} {
			a := submit(s, r.key, bad)
			Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
			Expect(a.body["error"]).To(Equal("malformed_json"))
		}
	})

	It("an export signed by another key, with 422 export_verification_failed", func() {
		_, other, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		var buf bytes.Buffer
		Expect(c.writeExport(&buf, 1, 10, exportTime(), other)).To(Succeed())
		a := submit(s, r.key, buf.Bytes())
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body["error"]).To(Equal("export_verification_failed"))
		Expect(a.body["check"]).To(Equal(protocol.CheckTrustedKey))
	})

	It("an export whose entry was changed after it was signed, naming the entry", func() {
		tampered := bytes.Replace(body, []byte(c.entries[4].CanonicalHash), []byte(c.entries[5].CanonicalHash), 1)
		Expect(tampered).NotTo(Equal(body))
		a := submit(s, r.key, tampered)
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body["error"]).To(Equal("export_verification_failed"))
		Expect(a.body["check"]).To(Equal(protocol.CheckEntries))
		Expect(a.body["seq"]).To(BeEquivalentTo(5))
	})

	It("an export whose header was changed after it was signed", func() {
		tampered := bytes.Replace(body, []byte(`"exported_at":"20`), []byte(`"exported_at":"19`), 1)
		Expect(tampered).NotTo(Equal(body))
		a := submit(s, r.key, tampered)
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body["check"]).To(Equal(protocol.CheckEnvelopeSignature))
	})
})
