package controllers

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// invalidCase is one object the API server must refuse: a valid sample, and a change that
// breaks exactly one validation rule.
type invalidCase struct {
	sample func() client.Object
	// change makes the object invalid.
	change func(client.Object)
	// on says when change applies: "create" (before creating), "update" (to the stored
	// object's spec) or "status" (through the status subresource).
	on string
}

// changing adapts a typed change function to any client.Object.
func changing[T client.Object](f func(T)) func(client.Object) {
	return func(o client.Object) { f(o.(T)) }
}

func fed() client.Object { return sampleFederation() }
func fo() client.Object  { return sampleOperator() }
func sub() client.Object { return sampleSubmission() }
func xa() client.Object  { return sampleCrossAnchor() }

const (
	rsaPEM   = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYWnm/eplO9BFtXszMRQNL5UtZ8HJdTH2jK7vjs4XGKvLOOW6DrVPBiu1pRc+Tr1D2C5MLIrrD7gXsYcB2R+EiQ==\n-----END PUBLIC KEY-----\n"
	upperHex = "10E47B9DA3EFBF2E32D9C2B21DE1D4DB480EA02C6843DE13436F3EA00E201467"
)

var _ = Describe("API validation", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("accepts every sample", func() {
		for _, obj := range []client.Object{fed(), fo(), sub(), xa()} {
			obj.SetNamespace(ns)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "%T", obj)
		}
	})

	It("fills in the Federation defaults", func() {
		f := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}}
		Expect(k8sClient.Create(ctx, f)).To(Succeed())
		Expect(f.Spec.AnchorInterval.Duration.String()).To(Equal("6h0m0s"))
		Expect(f.Spec.MinParticipants).To(Equal(int32(1)))
		Expect(f.Spec.TransparencyLog.Type).To(Equal(fv1.TransparencyLogEmbedded))
	})

	It("holds 10,000 participants in one CrossAnchor and refuses more", func() {
		a := sampleCrossAnchor()
		a.Namespace = ns
		a.Spec.Participants = participants(10000)
		Expect(k8sClient.Create(ctx, a)).To(Succeed())

		b := sampleCrossAnchor()
		b.Namespace, b.Name = ns, "anchor-20261121-002"
		b.Spec.Participants = participants(10001)
		err := k8sClient.Create(ctx, b)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.participants: Too many: 10001: must have at most 10000 items"))
	})

	DescribeTable("refuses an object that breaks a rule, saying which field and why",
		func(c invalidCase, field, message string) {
			obj := c.sample()
			obj.SetNamespace(ns)
			var err error
			switch c.on {
			case "create":
				c.change(obj)
				err = k8sClient.Create(ctx, obj)
			case "update", "status":
				Expect(k8sClient.Create(ctx, obj)).To(Succeed())
				// The controllers write status meanwhile: change the latest version.
				err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
					c.change(obj)
					if c.on == "status" {
						return k8sClient.Status().Update(ctx, obj)
					}
					return k8sClient.Update(ctx, obj)
				})
			default:
				Fail("unknown case kind " + c.on)
			}
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(field + ": "))
			Expect(err.Error()).To(ContainSubstring(message))
		},

		// Types shared by several kinds: each rule is written once, on the type.
		Entry("Hash: not hex", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.ChainSignature = "not-a-hash" }), "create"},
			"spec.chainSignature", "must be 64 lowercase hex characters"),
		Entry("Hash: upper-case hex", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.LastHMACHash = upperHex }), "create"},
			"spec.lastHMACHash", "must be 64 lowercase hex characters"),
		Entry("Hash: 63 characters", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.CrossAnchorHash = a.Spec.CrossAnchorHash[1:] }), "create"},
			"spec.crossAnchorHash", "must be 64 lowercase hex characters"),
		Entry("Hash: 65 characters", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.FirstPrevHash += "0" }), "create"},
			"spec.firstPrevHash", "Too long: may not be more than 64 bytes"),
		Entry("OperatorID: wrong shape", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.OperatorID = "op_XYZ" }), "create"},
			"spec.operatorID", "must be op_ followed by 16 lowercase hex characters"),
		Entry("Signature: not 64 bytes of base64", invalidCase{fo, changing(func(o *fv1.FederationOperator) { o.Spec.ProofOfPossession = "c2lnbmF0dXJl" }), "create"},
			"spec.proofOfPossession", "must be a base64 Ed25519 signature (88 characters)"),
		Entry("PublicKeyPEM: not PEM", invalidCase{fo, changing(func(o *fv1.FederationOperator) { o.Spec.PublicKeyPEM = "ssh-ed25519 AAAA" }), "create"},
			"spec.publicKeyPEM", "must be a PEM-encoded Ed25519 public key"),
		Entry("PublicKeyPEM: CRLF line ends", invalidCase{fo, changing(func(o *fv1.FederationOperator) {
			o.Spec.PublicKeyPEM = fv1.PublicKeyPEM(strings.ReplaceAll(string(o.Spec.PublicKeyPEM), "\n", "\r\n"))
		}), "create"}, "spec.publicKeyPEM", "must be a PEM-encoded Ed25519 public key"),
		Entry("PublicKeyPEM: no final LF", invalidCase{fo, changing(func(o *fv1.FederationOperator) {
			o.Spec.PublicKeyPEM = fv1.PublicKeyPEM(strings.TrimSuffix(string(o.Spec.PublicKeyPEM), "\n"))
		}), "create"}, "spec.publicKeyPEM", "must be a PEM-encoded Ed25519 public key"),
		Entry("PublicKeyPEM: a P-256 key", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.FederationPublicKeyPEM = rsaPEM }), "create"},
			"spec.federationPublicKeyPEM", "must be a PEM-encoded Ed25519 public key"),
		Entry("Timestamp: not RFC 3339", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.ExportedAt = "21/11/2026" }), "create"},
			"spec.exportedAt", "must be an RFC 3339 time"),
		Entry("AnchorID: wrong shape", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.AnchorID = "anchor-1" }), "create"},
			"spec.anchorID", "must look like anchor-20260102-001"),

		// Federation.
		Entry("Federation: unknown log type", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.TransparencyLog.Type = "sigstore" }), "create"},
			"spec.transparencyLog.type", `Unsupported value: "sigstore": supported values: "embedded", "rekor", "rekor-v2"`),
		Entry("Federation: rekor without a url", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.TransparencyLog.Type = fv1.TransparencyLogRekor }), "create"},
			"spec.transparencyLog", "url is required when type is rekor"),
		Entry("Federation: rekor-v2 without a key or a timestamp authority", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekorV2, URL: "https://log.example.org"}
		}), "create"}, "spec.transparencyLog", "url, publicKeyPEM and timestampAuthority are required when type is rekor-v2"),
		Entry("Federation: a timestamp authority for another log", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog.TimestampAuthority = &fv1.TimestampAuthority{URL: "https://tsa.example.org/api/v1/timestamp", CertChainPEM: "x"}
		}), "create"}, "spec.transparencyLog", "readURL and timestampAuthority are for type rekor-v2"),
		Entry("Federation: witnesses on rekor-v2", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekorV2, URL: "https://log.example.org",
				PublicKeyPEM: rsaPEM, TimestampAuthority: &fv1.TimestampAuthority{URL: "https://tsa.example.org", CertChainPEM: "x"},
				Witnesses: &fv1.WitnessPolicy{Quorum: 1, Witnesses: []fv1.WitnessRef{{Name: "w", Key: "w+00000000+AAAA", URL: "https://w.example.org"}}}}
		}), "create"}, "spec.transparencyLog", "witnesses are for the embedded log"),
		Entry("Federation: a retired log key that is not PEM", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog.RetiredLogs = []fv1.RetiredLog{{PublicKeyPEM: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"}}
		}), "create"}, "spec.transparencyLog.retiredLogs[0].publicKeyPEM", "publicKeyPEM must be a PEM PUBLIC KEY block"),
		Entry("Federation: rekor url that is not http", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: "rekor.example.org"}
		}), "create"}, "spec.transparencyLog.url", "url must be an http or https URL"),
		Entry("Federation: a log key that is not PEM", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.TransparencyLog.PublicKeyPEM = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" }), "create"},
			"spec.transparencyLog.publicKeyPEM", "publicKeyPEM must be a PEM PUBLIC KEY block"),
		Entry("Federation: a log key with CRLF line ends", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.TransparencyLog = fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: "https://rekor.example.org",
				PublicKeyPEM: strings.ReplaceAll(rsaPEM, "\n", "\r\n")}
		}), "create"}, "spec.transparencyLog.publicKeyPEM", "publicKeyPEM must be a PEM PUBLIC KEY block"),
		Entry("Federation: publicURL that is not http", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.PublicURL = "ftp://example.org" }), "create"},
			"spec.publicURL", "publicURL must be an http or https URL"),
		Entry("Federation: anchorInterval under a minute", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.AnchorInterval = metav1.Duration{Duration: 30e9} }), "create"},
			"spec.anchorInterval", "anchorInterval must be at least 1m"),
		Entry("Federation: pendingThreshold of zero", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.PendingThreshold = new(int32) }), "create"},
			"spec.pendingThreshold", "should be greater than or equal to 1"),
		Entry("Federation: an unknown registration mode", invalidCase{fed, changing(func(f *fv1.Federation) { f.Spec.Registration = "invite" }), "create"},
			"spec.registration", `Unsupported value: "invite": supported values: "open", "approval"`),
		Entry("Federation: an approval of a malformed ID", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: "op_XYZ"}}
		}), "create"}, "spec.approvedOperators[0].operatorID", "must be op_ followed by 16 lowercase hex characters"),
		Entry("Federation: an approval repeated", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: "op_000000000000000a"}, {OperatorID: "op_000000000000000a", Note: "again"}}
		}), "create"}, "spec.approvedOperators[1]", "Duplicate value"),
		Entry("Federation: an approval note over 256 characters", invalidCase{fed, changing(func(f *fv1.Federation) {
			f.Spec.ApprovedOperators = []fv1.OperatorApproval{{OperatorID: "op_000000000000000a", Note: strings.Repeat("n", 257)}}
		}), "create"}, "spec.approvedOperators[0].note", "may not be more than 256"),

		// FederationOperator.
		Entry("FederationOperator: empty orgName", invalidCase{fo, changing(func(o *fv1.FederationOperator) { o.Spec.OrgName = "" }), "create"},
			"spec.orgName", "should be at least 1 chars long"),
		Entry("FederationOperator: withdrawal taken back", invalidCase{func() client.Object {
			o := sampleOperator()
			o.Spec.Withdrawal = &fv1.Withdrawal{At: "2026-11-21T18:00:00Z", Signature: o.Spec.ProofOfPossession}
			return o
		}, changing(func(o *fv1.FederationOperator) { o.Spec.Withdrawal = nil }), "update"},
			"spec", "a withdrawal cannot be removed"),
		Entry("FederationOperator: unknown phase", invalidCase{fo, changing(func(o *fv1.FederationOperator) { o.Status.Phase = "Gone" }), "status"},
			"status.phase", `Unsupported value: "Gone": supported values: "Pending", "Active", "Suspended", "Withdrawn", "Rejected"`),

		// Submission.
		Entry("Submission: spec changed", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.EntryCount++ }), "update"},
			"spec", "spec is immutable"),
		Entry("Submission: firstSeq after lastSeq", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.FirstSeq = s.Spec.LastSeq + 1 }), "create"},
			"spec", "firstSeq must not exceed lastSeq"),
		Entry("Submission: entryCount below lastSeq", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.EntryCount = s.Spec.LastSeq - 1 }), "create"},
			"spec", "entryCount counts every entry through lastSeq"),
		Entry("Submission: seq of zero", invalidCase{sub, changing(func(s *fv1.Submission) { s.Spec.FirstSeq = 0 }), "create"},
			"spec.firstSeq", "should be greater than or equal to 1"),

		// CrossAnchor.
		Entry("CrossAnchor: record changed", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.AnchoredAt = "2026-11-21T18:00:00.000000001Z" }), "update"},
			"spec", "a cross-anchor record is immutable"),
		Entry("CrossAnchor: anchoredAt without nine fractional digits", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.AnchoredAt = "2026-11-21T18:00:00Z" }), "create"},
			"spec.anchoredAt", "must be RFC 3339 UTC with nine fractional digits"),
		Entry("CrossAnchor: no participants", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.Participants = nil }), "create"},
			"spec", "a seed-form anchor lists its participants"),
		Entry("CrossAnchor: a tree without anchorForm", invalidCase{xa, changing(func(a *fv1.CrossAnchor) {
			a.Spec.Tree = &fv1.AnchorTree{Size: 1, RootHash: fv1.Hash(strings.Repeat("ab", 32))}
		}), "create"}, "spec", "a Merkle-form anchor (anchorForm merkle-v1) states its tree instead"),
		Entry("CrossAnchor: the Merkle form listing participants", invalidCase{xa, changing(func(a *fv1.CrossAnchor) {
			a.Spec.AnchorForm, a.Spec.Tree = fv1.AnchorFormMerkle, &fv1.AnchorTree{Size: 1, RootHash: fv1.Hash(strings.Repeat("ab", 32))}
		}), "create"}, "spec", "a seed-form anchor lists its participants"),
		Entry("CrossAnchor: a tree of no leaves", invalidCase{xa, changing(func(a *fv1.CrossAnchor) {
			a.Spec.AnchorForm, a.Spec.Participants = fv1.AnchorFormMerkle, nil
			a.Spec.Tree = &fv1.AnchorTree{Size: 0, RootHash: fv1.Hash(strings.Repeat("ab", 32))}
		}), "create"}, "spec.tree.size", "should be greater than or equal to 1"),
		Entry("CrossAnchor: an unknown anchorForm", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Spec.AnchorForm = "merkle-v2" }), "create"},
			"spec.anchorForm", `Unsupported value: "merkle-v2": supported values: "merkle-v1"`),
		Entry("Federation: seedFormMaxParticipants above what one seed-form anchor holds", invalidCase{fed, changing(func(f *fv1.Federation) {
			n := int32(5001)
			f.Spec.SeedFormMaxParticipants = &n
		}), "create"}, "spec.seedFormMaxParticipants", "should be less than or equal to 5000"),
		Entry("CrossAnchor: unknown phase", invalidCase{xa, changing(func(a *fv1.CrossAnchor) { a.Status.Phase = "Done" }), "status"},
			"status.phase", `Unsupported value: "Done": supported values: "PendingTLog", "Anchored"`),
	)
})

// participants returns n distinct, well-formed participants in operatorID order.
func participants(n int) []fv1.Participant {
	ps := make([]fv1.Participant, n)
	for i := range ps {
		ps[i] = fv1.Participant{
			OperatorID:     fv1.OperatorID(fmt.Sprintf("op_%016x", i)),
			ChainSignature: fv1.Hash(strings.Repeat(fmt.Sprintf("%08x", i), 8)),
			LastSeq:        int64(i) + 1_000_000_000,
		}
	}
	return ps
}
