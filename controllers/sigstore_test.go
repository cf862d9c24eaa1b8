package controllers

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// verifySigstoreBundle checks ca's log leg as Sigstore's own verifier does: the bundle
// and trusted root the API serves, checked by hack/sigstore-verify (sigstore-go's
// trusted-material, bundle and verify code, nothing of Cairn's; CAIRN_SIGSTORE_VERIFY
// names the binary make test builds) with the federation's key and the anchor's
// cross_anchor_hash. Every tampered copy must fail it.
func verifySigstoreBundle(fed *fv1.Federation, ca *fv1.CrossAnchor, logKey crypto.PublicKey) {
	GinkgoHelper()
	bin := os.Getenv("CAIRN_SIGSTORE_VERIFY")
	Expect(bin).NotTo(BeEmpty(), "CAIRN_SIGSTORE_VERIFY names hack/sigstore-verify built (make sigstore-verify-build)")
	b, err := federation.SigstoreBundle(currentFederation(fed), ca, []crypto.PublicKey{logKey})
	Expect(err).NotTo(HaveOccurred())
	root, err := federation.TrustedRoot(ctx, currentFederation(fed), logKey, nil)
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	write := func(name string, v any) string {
		path := filepath.Join(dir, name)
		var raw []byte
		switch v := v.(type) {
		case []byte:
			raw = v
		default:
			raw, err = json.Marshal(v)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(os.WriteFile(path, raw, 0o600)).To(Succeed())
		return path
	}
	hash, err := hex.DecodeString(string(ca.Spec.CrossAnchorHash))
	Expect(err).NotTo(HaveOccurred())
	args := func(bundle string) []string {
		return []string{"--bundle", bundle, "--trusted-root", write("trusted_root.json", root),
			"--key", write("federation.pem", []byte(ca.Spec.FederationPublicKeyPEM)), "--artifact", write("anchor.bin", hash)}
	}
	out, err := exec.Command(bin, args(write("bundle.json", b))...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "sigstore-verify:\n%s", out)
	GinkgoWriter.Printf("sigstore-verify: %s", out)

	flip := func(s string) string { // one bit of a base64 value
		raw, err := base64.StdEncoding.DecodeString(s)
		Expect(err).NotTo(HaveOccurred())
		raw[len(raw)/2] ^= 1
		return base64.StdEncoding.EncodeToString(raw)
	}
	for what, tamper := range map[string]func(t *sigstorebundle.Bundle){
		"the signature": func(t *sigstorebundle.Bundle) { t.MessageSignature.Signature = flip(t.MessageSignature.Signature) },
		"the digest": func(t *sigstorebundle.Bundle) {
			t.MessageSignature.MessageDigest.Digest = flip(t.MessageSignature.MessageDigest.Digest)
		},
		"the checkpoint": func(t *sigstorebundle.Bundle) {
			e := &t.VerificationMaterial.TlogEntries[0].InclusionProof.Checkpoint
			e.Envelope = string(bytes.Replace([]byte(e.Envelope), []byte("\n"), []byte("\n0"), 1))
		},
		"the log index": func(t *sigstorebundle.Bundle) { t.VerificationMaterial.TlogEntries[0].LogIndex += "0" },
		"the timestamp": func(t *sigstorebundle.Bundle) {
			ts := t.VerificationMaterial.TimestampVerificationData.RFC3161Timestamps
			ts[0].SignedTimestamp = flip(ts[0].SignedTimestamp)
		},
		"no timestamp": func(t *sigstorebundle.Bundle) { t.VerificationMaterial.TimestampVerificationData = nil },
	} {
		raw, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		var t sigstorebundle.Bundle
		Expect(json.Unmarshal(raw, &t)).To(Succeed())
		tamper(&t)
		out, err := exec.Command(bin, args(write("tampered.json", &t))...).CombinedOutput()
		Expect(err).To(HaveOccurred(), "a bundle with %s changed verified:\n%s", what, out)
	}
}
