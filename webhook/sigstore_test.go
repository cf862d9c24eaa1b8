package webhook

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/transparency-dev/merkle/rfc6962"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

var _ = Describe("GET /federation/anchor/{id}/sigstore-bundle", Ordered, ContinueOnFailure, func() {
	var (
		f     readFederation
		s     *Server
		other *fv1.CrossAnchor // a logged anchor whose log leg the attacks copy
	)
	BeforeAll(func() {
		f = newReadFederation()
		s = f.server()
		other = logged(f.anchor("anchor-20261106-900", f.signingKey(), "op_00000000000000c3"))
	})

	It("serves an anchor's log leg as a Sigstore bundle: the logged body, and the federation's signature over the anchor", func() {
		ca := logged(f.anchor("anchor-20261106-001", f.signingKey(), "op_00000000000000b2", "op_00000000000000a1"))
		a := do(s, http.MethodGet, "/federation/anchor/anchor-20261106-001/sigstore-bundle", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.header.Get("Content-Type")).To(Equal("application/json"))
		b := bundleOf(a)
		Expect(b.MediaType).To(Equal("application/vnd.dev.sigstore.bundle.v0.3+json"))
		Expect(b.VerificationMaterial.TlogEntries).To(HaveLen(1))
		e := b.VerificationMaterial.TlogEntries[0]
		Expect(e.CanonicalizedBody).To(Equal(ca.Status.EntryBody), "the entry is the one the anchor's status records")
		Expect(e.LogIndex).To(Equal(strconv.FormatInt(ca.Status.LogEntry.LogIndex, 10)))
		Expect(e.KindVersion).To(Equal(sigstorebundle.KindVersion{Kind: "hashedrekord", Version: "0.0.1"}))
		Expect(e.InclusionPromise).NotTo(BeNil(), "the embedded log signs entry timestamps")
		Expect(e.InclusionPromise.SignedEntryTimestamp).To(Equal(ca.Status.SignedEntryTimestamp))
		Expect(b.VerificationMaterial.TimestampVerificationData).To(BeNil(), "the embedded log's entries carry no RFC 3161 timestamp")

		fedPub, err := protocol.ParsePublicKeyPEM([]byte(ca.Spec.FederationPublicKeyPEM))
		Expect(err).NotTo(HaveOccurred())
		Expect(b.VerificationMaterial.PublicKey.Hint).To(Equal(protocol.Fingerprint(fedPub)))
		content, err := protocol.CrossAnchorLogContent(string(ca.Spec.CrossAnchorHash))
		Expect(err).NotTo(HaveOccurred())
		digest := mustBase64(b.MessageSignature.MessageDigest.Digest)
		Expect(b.MessageSignature.MessageDigest.Algorithm).To(Equal("SHA2_512"))
		Expect(digest).To(Equal(sha512Of(content)), "the digest is the SHA-512 of the anchor's cross_anchor_hash bytes")
		Expect(ed25519.VerifyWithOptions(fedPub, digest, mustBase64(b.MessageSignature.Signature), &ed25519.Options{Hash: crypto.SHA512})).
			To(Succeed(), "the message signature is the anchor's federation key's Ed25519ph signature")

		logKey := f.logKey()
		der, err := x509.MarshalPKIXPublicKey(logKey)
		Expect(err).NotTo(HaveOccurred())
		id := sha256.Sum256(der)
		Expect(e.LogID.KeyID).To(Equal(base64.StdEncoding.EncodeToString(id[:])), "the log is named by its key, as Rekor v1 names it")
		body, err := protocol.VerifyLogBundle(logBundleOf(b), protocol.LogVerifyOptions{Key: logKey})
		Expect(err).NotTo(HaveOccurred(), "the bundle's proofs verify under the federation's log key")
		Expect(protocol.VerifyHashedRekord(body, content, fedPub)).To(Succeed())
	})

	It("answers 400 invalid_anchor_id for a malformed ID", func() {
		for _, id := range []string{"anchor-2026110-001", "anchor-20261106-0011", "op_0123456789abcdef", "..%2f..%2fsecret"} {
			a := do(s, http.MethodGet, "/federation/anchor/"+id+"/sigstore-bundle", nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), id)
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_anchor_id"), id)
		}
	})

	It("answers 404 anchor_not_found for an unknown anchor, and for one the federation did not make", func() {
		a := do(s, http.MethodGet, "/federation/anchor/anchor-20261106-999/sigstore-bundle", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_found"))

		_, forger, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		f.anchor("anchor-20261106-002", forger, "op_00000000000000a1")
		a = do(s, http.MethodGet, "/federation/anchor/anchor-20261106-002/sigstore-bundle", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_found"))
		Expect(string(a.raw)).NotTo(ContainSubstring("tlogEntries"))
	})

	// The attack: whoever can write an anchor's status (it is the manager's word, not
	// evidence) puts a log leg there that the log never proved for this anchor. The
	// bundle would carry it to Sigstore's tools as the federation's.
	DescribeTable("serves no bundle of a log leg that does not verify: 404 anchor_not_logged",
		func(id string, tamper func(st, other *fv1.CrossAnchorStatus)) {
			ca := logged(f.anchor(id, f.signingKey(), "op_00000000000000a1"))
			path := "/federation/anchor/" + id + "/sigstore-bundle"
			Expect(do(s, http.MethodGet, path, nil).status).To(Equal(http.StatusOK), "the honest log leg is served")

			var cur fv1.CrossAnchor
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ca), &cur)).To(Succeed())
			tamper(&cur.Status, other.Status.DeepCopy())
			Expect(k8sClient.Status().Update(ctx, &cur)).To(Succeed())
			Eventually(func(g Gomega) {
				var got fv1.CrossAnchor
				g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &got)).To(Succeed())
				g.Expect(got.ResourceVersion).To(Equal(cur.ResourceVersion))
			}).Should(Succeed(), "the cache holds the tampered status")

			a := do(s, http.MethodGet, path, nil)
			Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_logged"))
			Expect(string(a.raw)).NotTo(ContainSubstring("tlogEntries"))
		},
		Entry("its inclusion proof's root changed", "anchor-20261106-101", func(st, _ *fv1.CrossAnchorStatus) {
			sum := sha256.Sum256([]byte("a root the log never signed"))
			st.InclusionProof.RootHash = fv1.Hash(hex.EncodeToString(sum[:]))
		}),
		Entry("its entry body swapped for another anchor's", "anchor-20261106-102", func(st, other *fv1.CrossAnchorStatus) {
			st.EntryBody = other.EntryBody
		}),
		Entry("its whole log leg swapped for another anchor's, which verifies", "anchor-20261106-103", func(st, other *fv1.CrossAnchorStatus) {
			st.LogEntry, st.InclusionProof, st.SignedEntryTimestamp, st.EntryBody = other.LogEntry, other.InclusionProof, other.SignedEntryTimestamp, other.EntryBody
		}),
		Entry("its log index moved", "anchor-20261106-104", func(st, _ *fv1.CrossAnchorStatus) {
			st.LogEntry.LogIndex += 1000
		}),
	)

	It("answers 404 anchor_not_logged while the log has not recorded the anchor; the trusted root of a Rekor v1 log needs no call to it", func() {
		p := newTestFederation("cairn-sigstore-pending-", 10000)
		_, rekorKey, err := ed25519.GenerateKey(nil)
		Expect(err).NotTo(HaveOccurred())
		rekorPEM, err := marshalPub(rekorKey)
		Expect(err).NotTo(HaveOccurred())
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, p.key, &fed)).To(Succeed())
		fed.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: "http://127.0.0.1:1", PublicKeyPEM: rekorPEM}
		Expect(k8sClient.Update(ctx, &fed)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mgr.GetClient().Get(ctx, p.key, &fed)).To(Succeed())
			g.Expect(fed.Spec.TransparencyLog.Type).To(Equal(fv1.TransparencyLogRekor))
		}).Should(Succeed())

		ca := p.anchor("anchor-20261106-201", p.signingKey(), "op_00000000000000a1")
		Eventually(func(g Gomega) {
			var got fv1.CrossAnchor
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &got)).To(Succeed())
			g.Expect(got.Status.Phase).To(Equal(fv1.PhasePendingTLog), "a log at a closed port records nothing")
		}).Should(Succeed())
		ps := p.server()
		a := do(ps, http.MethodGet, "/federation/anchor/anchor-20261106-201/sigstore-bundle", nil)
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "anchor_not_logged"))

		a = do(ps, http.MethodGet, "/federation/log/trusted-root", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		root, err := sigstorebundle.ParseTrustedRoot(a.raw)
		Expect(err).NotTo(HaveOccurred())
		Expect(root.Tlogs).To(HaveLen(1))
		Expect(root.Tlogs[0].BaseURL).To(Equal("http://127.0.0.1:1"))
		Expect(root.Tlogs[0].CheckpointKeyID).To(BeNil(), "a Rekor v1 log is named by its key alone")
		der, err := x509.MarshalPKIXPublicKey(rekorKey.Public())
		Expect(err).NotTo(HaveOccurred())
		id := sha256.Sum256(der)
		Expect(root.Tlogs[0].LogID.KeyID).To(Equal(base64.StdEncoding.EncodeToString(id[:])))
		Expect(root.Tlogs[0].PublicKey.ValidFor.Start).To(Equal(fed.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")))
		Expect(root.TimestampAuthorities).To(BeEmpty())
	})
})

var _ = Describe("GET /federation/log/trusted-root", func() {
	It("answers 404 log_not_served for a federation on its embedded log", func() {
		a := do(newServer(Options{}), http.MethodGet, "/federation/log/trusted-root", nil) // the suite's federation: embedded
		Expect(a.status).To(Equal(http.StatusNotFound), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "log_not_served"))
		Expect(string(a.raw)).NotTo(ContainSubstring("tlogs"))
	})
})

// bundleOf decodes a Sigstore bundle answer.
func bundleOf(a answer) *sigstorebundle.Bundle {
	GinkgoHelper()
	var b sigstorebundle.Bundle
	Expect(json.Unmarshal(a.raw, &b)).To(Succeed())
	return &b
}

// logBundleOf turns a Sigstore bundle's one log entry back into Cairn's log proof
// bundle, to verify its proofs with protocol.VerifyLogBundle.
func logBundleOf(b *sigstorebundle.Bundle) *protocol.LogBundle {
	GinkgoHelper()
	e := b.VerificationMaterial.TlogEntries[0]
	hexOf := func(s string) string { return hex.EncodeToString(mustBase64(s)) }
	atoi := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		Expect(err).NotTo(HaveOccurred())
		return n
	}
	p := e.InclusionProof
	lb := &protocol.LogBundle{UUID: hex.EncodeToString(rfc6962.DefaultHasher.HashLeaf(mustBase64(e.CanonicalizedBody))),
		Body: e.CanonicalizedBody, LogID: hexOf(e.LogID.KeyID), LogIndex: atoi(e.LogIndex), IntegratedTime: atoi(e.IntegratedTime),
		Verification: protocol.LogVerification{InclusionProof: protocol.InclusionProof{LogIndex: atoi(p.LogIndex),
			RootHash: hexOf(p.RootHash), TreeSize: atoi(p.TreeSize), Hashes: []string{}, Checkpoint: p.Checkpoint.Envelope}}}
	for _, h := range p.Hashes {
		lb.Verification.InclusionProof.Hashes = append(lb.Verification.InclusionProof.Hashes, hexOf(h))
	}
	if e.InclusionPromise != nil {
		lb.Verification.SignedEntryTimestamp = e.InclusionPromise.SignedEntryTimestamp
	}
	return lb
}

func mustBase64(s string) []byte {
	GinkgoHelper()
	raw, err := base64.StdEncoding.DecodeString(s)
	Expect(err).NotTo(HaveOccurred())
	return raw
}

func sha512Of(b []byte) []byte {
	sum := sha512.Sum512(b)
	return sum[:]
}
