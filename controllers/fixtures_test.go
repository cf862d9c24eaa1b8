package controllers

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// testOperator is an organization with its key, as the tests register and submit for it.
type testOperator struct {
	key ed25519.PrivateKey
	org string
}

func newTestOperator(seed byte, org string) testOperator {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return testOperator{key: ed25519.NewKeyFromSeed(s), org: org}
}

func (o testOperator) pub() ed25519.PublicKey { return o.key.Public().(ed25519.PublicKey) }

func (o testOperator) id() fv1.OperatorID { return fv1.OperatorID(protocol.OperatorID(o.pub())) }

func (o testOperator) pem() fv1.PublicKeyPEM {
	text, err := protocol.MarshalPublicKeyPEM(o.pub())
	Expect(err).NotTo(HaveOccurred())
	return fv1.PublicKeyPEM(text)
}

// object is the FederationOperator registering o, with its proof of possession.
func (o testOperator) object(ns, name string) *fv1.FederationOperator {
	return &fv1.FederationOperator{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: fv1.FederationOperatorSpec{
			OrgName:           o.org,
			PublicKeyPEM:      o.pem(),
			ProofOfPossession: fv1.Signature(protocol.SignRegistration(o.key, o.org)),
		},
	}
}

// segment is a run of an operator's chain, as one export's header describes it.
type segment struct {
	firstSeq, lastSeq       int64
	firstPrevHash, lastHMAC string
}

// chainHash is a stand-in hmac_hash for seq n of an operator's chain: the controllers
// never see rows, only the hashes a header states.
func (o testOperator) chainHash(n int64) string {
	if n == 0 {
		return protocol.GenesisPrevHash
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", o.org, n))
	return hex.EncodeToString(sum[:])
}

// next is the segment after the first lastSeq entries, through lastSeq+count.
func (o testOperator) next(lastSeq, count int64) segment {
	return segment{lastSeq + 1, lastSeq + count, o.chainHash(lastSeq), o.chainHash(lastSeq + count)}
}

// submission is the Submission of seg, its header signed by o.
func (o testOperator) submission(ns, name string, seg segment) *fv1.Submission {
	return o.submissionSigning(ns, name, seg, o.chainHash(-seg.lastSeq))
}

// submissionNames maps the name a spec calls a submission by ("<namespace>/<alias>") to
// its name: the federation requires federation.SubmissionName, sub-<operator>-<firstSeq>.
var submissionNames sync.Map

// subName is the name of the submission a spec in ns calls alias (alias itself when no
// submission was made under it).
func subName(ns, alias string) string {
	if name, ok := submissionNames.Load(ns + "/" + alias); ok {
		return name.(string)
	}
	return alias
}

// submissionSigning is the Submission of seg with the chain signature cs in its signed
// header (the federation holds no HMAC secret, so it cannot tell a meaningless one),
// named as the federation names it; the spec calls it alias.
func (o testOperator) submissionSigning(ns, alias string, seg segment, cs string) *fv1.Submission {
	return o.signed(ns, alias, o.id(), seg, cs)
}

// submissionAs is the Submission of seg for operator id, its header signed by o: after a
// key rotation, an operator signs with a key whose own ID is not the operator's.
func (o testOperator) submissionAs(ns, alias string, id fv1.OperatorID, seg segment) *fv1.Submission {
	return o.signed(ns, alias, id, seg, o.chainHash(-seg.lastSeq))
}

// deleteRefused deletes the refused submission a spec calls alias, as the federation API
// does once it has answered the refusal, so that the segment's name is free again.
func deleteRefused(ns, alias string) {
	GinkgoHelper()
	Expect(k8sClient.Delete(ctx, &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: subName(ns, alias)}})).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, alias)}, &fv1.Submission{}))
	}).Should(BeTrue())
}

// signed is the Submission of seg for operator id with chain signature cs, its header
// signed by o, named as the federation names it; the spec calls it alias.
func (o testOperator) signed(ns, alias string, id fv1.OperatorID, seg segment, cs string) *fv1.Submission {
	name := federation.SubmissionName(id, seg.firstSeq)
	submissionNames.Store(ns+"/"+alias, name)
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
		ExportedAt: time.Now().UTC().Truncate(time.Second).Format(time.RFC3339), EntryCount: seg.lastSeq,
		FirstSeq: seg.firstSeq, LastSeq: seg.lastSeq, FirstPrevHash: seg.firstPrevHash, LastHMACHash: seg.lastHMAC,
		ChainSignature: cs, EntriesRoot: o.chainHash(-1 - seg.lastSeq)}
	signed, err := h.SignedBytes()
	Expect(err).NotTo(HaveOccurred())
	return &fv1.Submission{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: fv1.SubmissionSpec{
			OperatorID: id, ChainSignature: fv1.Hash(h.ChainSignature), EntryCount: h.EntryCount,
			FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash),
			LastHMACHash: fv1.Hash(h.LastHMACHash), ExportedAt: fv1.Timestamp(h.ExportedAt),
			SignedHeader: string(signed), Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(o.key, signed))),
			PublicKeyPEM: o.pem(),
		},
	}
}

// suiteLog is the log the Federations of the log specs use: embedded, the local Rekor
// of hack/rekor-up.sh when CAIRN_FEDERATION_LOG=rekor, or the local Rekor v2 and
// timestamp authority of hack/rekor-v2-up.sh when it is rekor-v2 (make test runs those
// specs each way).
func suiteLog() fv1.TransparencyLog {
	switch os.Getenv("CAIRN_FEDERATION_LOG") {
	case "rekor":
		url := os.Getenv("REKOR_URL")
		Expect(url).NotTo(BeEmpty(), "CAIRN_FEDERATION_LOG=rekor needs REKOR_URL (hack/rekor-up.sh)")
		return fv1.TransparencyLog{Type: fv1.TransparencyLogRekor, URL: url}
	case "rekor-v2":
		return rekorV2Log()
	}
	return fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}
}

// rekorV2Log is the local Rekor v2 of hack/rekor-v2-up.sh, as its env file describes it.
func rekorV2Log() fv1.TransparencyLog {
	GinkgoHelper()
	read := func(name string) string {
		path := os.Getenv(name)
		Expect(path).NotTo(BeEmpty(), "CAIRN_FEDERATION_LOG=rekor-v2 needs %s (hack/rekor-v2-up.sh)", name)
		text, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		return string(text)
	}
	url, tsa := os.Getenv("REKOR_V2_URL"), os.Getenv("TSA_TIMESTAMP_URL")
	Expect(url).NotTo(BeEmpty(), "CAIRN_FEDERATION_LOG=rekor-v2 needs REKOR_V2_URL (hack/rekor-v2-up.sh)")
	Expect(tsa).NotTo(BeEmpty(), "CAIRN_FEDERATION_LOG=rekor-v2 needs TSA_TIMESTAMP_URL (hack/rekor-v2-up.sh)")
	return fv1.TransparencyLog{Type: fv1.TransparencyLogRekorV2, URL: url, ReadURL: os.Getenv("REKOR_V2_READ_URL"),
		PublicKeyPEM:       read("REKOR_V2_PUBLIC_KEY"),
		TimestampAuthority: &fv1.TimestampAuthority{URL: tsa, CertChainPEM: read("TSA_CERT_CHAIN")}}
}

// onRekor reports whether the log specs run against a local Rekor, v1 or v2.
func onRekor() bool {
	v := os.Getenv("CAIRN_FEDERATION_LOG")
	return v == "rekor" || v == "rekor-v2"
}

// onRekorV2 reports whether the log specs run against the local Rekor v2.
func onRekorV2() bool { return os.Getenv("CAIRN_FEDERATION_LOG") == "rekor-v2" }

// stopLog makes fed's log unavailable: the embedded log is closed; the local Rekor's
// server is stopped.
func stopLog(fed *fv1.Federation) {
	GinkgoHelper()
	if onRekorV2() {
		rekorV2Script("stop-rekor")
		return
	}
	if onRekor() {
		rekorScript("stop-rekor")
		return
	}
	Expect(suiteLogs.stop(ctx, client.ObjectKeyFromObject(fed))).To(Succeed())
}

// restartLog brings fed's log back. The local Rekor's in-memory signer has a new key after
// a restart, so the client is made again and fetches it.
func restartLog(fed *fv1.Federation) {
	GinkgoHelper()
	if onRekorV2() {
		rekorV2Script("start-rekor")
	} else if onRekor() {
		rekorScript("start-rekor")
	}
	suiteLogs.restart(client.ObjectKeyFromObject(fed))
}

func rekorScript(sub string) { runHack("rekor-up.sh", sub) }

func rekorV2Script(sub string) { runHack("rekor-v2-up.sh", sub) }

func runHack(script, sub string) {
	GinkgoHelper()
	out, err := exec.Command("bash", filepath.Join("..", "hack", script), sub).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "hack/%s %s:\n%s", script, sub, out)
}

// touchFederation changes fed's spec (minParticipants), so that its controller reconciles
// it now: the controllers do not watch Secrets, and a test that deletes or restores one
// need not wait for a periodic retry.
func touchFederation(fed *fv1.Federation) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var f fv1.Federation
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
		f.Spec.MinParticipants++
		return k8sClient.Update(ctx, &f)
	})).To(Succeed())
}

// requestAnchor writes id into fed's anchor request annotation, as the API does.
func requestAnchor(fed *fv1.Federation, id string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var f fv1.Federation
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
		if f.Annotations == nil {
			f.Annotations = map[string]string{}
		}
		f.Annotations[fv1.AnchorRequestAnnotation] = id
		return k8sClient.Update(ctx, &f)
	})).To(Succeed())
}

// handledRequest waits until fed's status records request id, and returns the record.
func handledRequest(fed *fv1.Federation, id string) *fv1.AnchorRequest {
	GinkgoHelper()
	var req *fv1.AnchorRequest
	Eventually(func(g Gomega) {
		s := federationStatus(fed)()
		g.Expect(s.AnchorRequest).NotTo(BeNil())
		g.Expect(s.AnchorRequest.ID).To(Equal(id))
		if s.AnchorRequest.AnchorID != "" {
			// Written together: a status that records the request names its anchor as the last.
			g.Expect(s.LastAnchor).NotTo(BeNil())
			g.Expect(s.LastAnchor.AnchorID).To(Equal(s.AnchorRequest.AnchorID))
		}
		req = s.AnchorRequest
	}).Should(Succeed())
	return req
}
