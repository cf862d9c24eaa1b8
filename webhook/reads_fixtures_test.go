package webhook

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// readFederation is a Federation of its own, in a namespace of its own, for the read
// endpoints' specs: the anchors they sign never become the suite Federation's last anchor.
type readFederation struct {
	key types.NamespacedName
}

// newReadFederation creates a Federation with an embedded log and waits for its key.
func newReadFederation() readFederation {
	GinkgoHelper()
	return newTestFederation("cairn-reads-", 10000) // no anchor run: the specs make the anchors they list
}

// newTestFederation creates, in a new namespace named from prefix, a Federation with an
// embedded log and minParticipants, and waits until its key is loaded and recorded.
func newTestFederation(prefix string, minParticipants int32) readFederation {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	key := types.NamespacedName{Namespace: ns.Name, Name: "cairn"}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, MinParticipants: minParticipants}}
	Expect(k8sClient.Create(ctx, fed)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, key, fed)).To(Succeed())
		g.Expect(fed.Status.PublicKeyPEM).NotTo(BeEmpty())
		g.Expect(fed.Status.SigningKeySecret).NotTo(BeEmpty())
		g.Expect(fed.Status.KeyHistory).NotTo(BeEmpty())
	}).Should(Succeed())
	return readFederation{key: key}
}

// server is an API server for f on the suite's manager.
func (f readFederation) server() *Server {
	GinkgoHelper()
	s, err := New(Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: f.key,
		RatePerSecond: -1, RegistrationLimit: -1})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// signingKey is the key f signs anchors with now, read from its Secret.
func (f readFederation) signingKey() ed25519.PrivateKey {
	GinkgoHelper()
	var fed fv1.Federation
	Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
	var sec corev1.Secret
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: fed.Status.SigningKeySecret}, &sec)).To(Succeed())
	key, err := protocol.ParsePrivateKeyPEM(sec.Data[federation.SigningKeySecretKey])
	Expect(err).NotTo(HaveOccurred())
	return key
}

// anchor creates the CrossAnchor id binding operators, signed by key as an anchor run
// signs it, and waits until the manager's cache holds it.
func (f readFederation) anchor(id string, key ed25519.PrivateKey, operators ...string) *fv1.CrossAnchor {
	GinkgoHelper()
	ids := append([]string(nil), operators...)
	sort.Strings(ids)
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: id}}
	ca.Spec.AnchorID = fv1.AnchorID(id)
	ca.Spec.AnchoredAt = fmt.Sprintf("20%s-%s-%sT06:00:00.%09dZ", id[9:11], id[11:13], id[13:15], len(id)+int(id[18]))
	for _, op := range ids {
		sum := sha256.Sum256([]byte(id + " " + op))
		cs := hex.EncodeToString(sum[:])
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: fv1.OperatorID(op), ChainSignature: fv1.Hash(cs), LastSeq: 7})
	}
	signAnchorSpec(ca, key)
	Expect(k8sClient.Create(ctx, ca)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(ctx, ca) })
	Eventually(func() error { return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &fv1.CrossAnchor{}) }).Should(Succeed())
	return ca
}

// logKey is the key of f's transparency log.
func (f readFederation) logKey() crypto.PublicKey {
	GinkgoHelper()
	var fed fv1.Federation
	Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
	pemText, err := federation.LogPublicKeyPEM(ctx, k8sClient, &fed)
	Expect(err).NotTo(HaveOccurred())
	key, err := protocol.ParseLogPublicKeyPEM([]byte(pemText))
	Expect(err).NotTo(HaveOccurred())
	return key
}

// signAnchorSpec computes ca's hash from its participants and anchoredAt and signs it
// with key, as an anchor run does.
func signAnchorSpec(ca *fv1.CrossAnchor, key ed25519.PrivateKey) {
	GinkgoHelper()
	Expect(signedAnchorSpec(ca, key)).To(Succeed())
}

// signedAnchorSpec is signAnchorSpec outside Ginkgo (the benchmarks).
func signedAnchorSpec(ca *fv1.CrossAnchor, key ed25519.PrivateKey) error {
	r := protocol.Receipt{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt}
	for _, p := range ca.Spec.Participants {
		r.ParticipatingOperators = append(r.ParticipatingOperators, protocol.Participant{OperatorID: string(p.OperatorID), ChainSignature: string(p.ChainSignature)})
	}
	var err error
	if r.CrossAnchorHash, err = protocol.CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt); err != nil {
		return err
	}
	if _, err = protocol.SignReceipt(&r, key); err != nil {
		return err
	}
	ca.Spec.CrossAnchorHash, ca.Spec.FederationSignature = fv1.Hash(r.CrossAnchorHash), fv1.Signature(r.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(r.FederationPublicKeyPEM)
	return nil
}

// register registers r through s and returns its operator ID.
func (f readFederation) register(s *Server, r registrant) string {
	GinkgoHelper()
	a := do(s, http.MethodPost, "/federation/register", r.body(challenge(s)))
	Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	return a.body["operator_id"].(string)
}

// submissionNames maps the name a spec calls a submission by ("<namespace>/<alias>") to
// its name, which the federation derives from its operator and first seq.
var submissionNames sync.Map

// submit creates the Submission of r's entries after..after+count, its header signed by
// r's key, named as the federation names it (the spec calls it alias), and waits until
// the controller accepted it.
func (f readFederation) submit(r registrant, id, alias string, after, count int64) {
	GinkgoHelper()
	hash := func(n int64) string {
		if n == 0 {
			return protocol.GenesisPrevHash
		}
		sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", r.org, n))
		return hex.EncodeToString(sum[:])
	}
	last := after + count
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
		ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: last,
		FirstSeq: after + 1, LastSeq: last, FirstPrevHash: hash(after), LastHMACHash: hash(last),
		ChainSignature: hash(-last), EntriesRoot: hash(-1 - last)}
	signed, err := h.SignedBytes()
	Expect(err).NotTo(HaveOccurred())
	pemText, err := marshalPub(r.key)
	Expect(err).NotTo(HaveOccurred())
	name := federation.SubmissionName(fv1.OperatorID(id), h.FirstSeq)
	submissionNames.Store(f.key.Namespace+"/"+alias, name)
	sub := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: name},
		Spec: fv1.SubmissionSpec{OperatorID: fv1.OperatorID(id), ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
			FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
			ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
			Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(r.key, signed))), PublicKeyPEM: fv1.PublicKeyPEM(pemText)}}
	Expect(k8sClient.Create(ctx, sub)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
		g.Expect(sub.Status.Ed25519Verified && sub.Status.ContinuityVerified).To(BeTrue())
	}).Should(Succeed())
}
