package controllers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// These specs play a namespace user who can create CrossAnchors. The admission policy
// (config/admission) is the first wall and refuses them; these objects are created as
// the manager would, to show that the controllers, the second wall, trust none of them.

// forgedAnchor is a CrossAnchor named name that binds op's submission sub, with a hash
// that recomputes and fed's public key, but a signature the federation never made.
func forgedAnchor(fed *fv1.Federation, name string, sub *fv1.Submission) *fv1.CrossAnchor {
	GinkgoHelper()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: name, Labels: map[string]string{federation.FederationLabel: fed.Name}}}
	ca.Spec.AnchorID = fv1.AnchorID(name)
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(suiteClock.Now().UTC())
	ca.Spec.Participants = []fv1.Participant{{OperatorID: sub.Spec.OperatorID, ChainSignature: sub.Spec.ChainSignature, LastSeq: sub.Spec.LastSeq}}
	r := federation.AnchorReceipt(ca)
	hash, err := protocol.CrossAnchorHash(r.ParticipatingOperators, r.AnchoredAt)
	Expect(err).NotTo(HaveOccurred())
	ca.Spec.CrossAnchorHash = fv1.Hash(hash)
	ca.Spec.FederationSignature = fv1.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64)))
	ca.Spec.FederationPublicKeyPEM = currentFederation(fed).Status.PublicKeyPEM
	return ca
}

func getSubmission(ns, name string) *fv1.Submission {
	GinkgoHelper()
	var s fv1.Submission
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: subName(ns, name)}, &s)).To(Succeed())
	return &s
}

func anchorPhase(ns, name string) func() fv1.CrossAnchorPhase {
	return func() fv1.CrossAnchorPhase { return getAnchor(ns, name).Status.Phase }
}

var _ = Describe("A CrossAnchor the federation did not make", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
	)
	BeforeEach(func() {
		ns = newNamespace()
		threshold := int32(2)
		fed = newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
	})

	It("is Rejected: never logged, adopted, marked from, counted for naming or made a receipt", func() {
		victim := newTestOperator(90, "Victim")
		sub := getSubmission(ns, submitFor(ns, victim, "victim", 5))
		today := suiteClock.Now().UTC().Format("20060102")
		forged := []*fv1.CrossAnchor{
			forgedAnchor(fed, "anchor-20000101-001", sub),  // sorts first: the marker's first covering anchor
			forgedAnchor(fed, "anchor-"+today+"-999", sub), // would end anchoring for today
			forgedAnchor(fed, "anchor-20991231-999", sub),  // sorts last: the Federation's newest anchor
		}
		for _, ca := range forged {
			Expect(k8sClient.Create(ctx, ca)).To(Succeed())
		}
		for _, ca := range forged {
			Eventually(anchorPhase(ns, ca.Name)).Should(Equal(fv1.PhaseAnchorRejected))
			got := getAnchor(ns, ca.Name)
			Expect(conditionReason(fv1.ConditionReady)(got.Status.Conditions)).To(Equal("False/" + fv1.ReasonUntrusted))
			Expect(got.Status.LogEntry).To(BeNil(), "not uploaded")
			Expect(got.Finalizers).To(BeEmpty(), "not kept as a record")
			Expect(got.OwnerReferences).To(BeEmpty(), "not made its Federation's")
			Eventually(func() []string { return eventReasons(ns, ca.Name) }).Should(ContainElement(fv1.ReasonUntrusted))
		}
		Expect(federationStatus(fed)().LastAnchor).To(BeNil(), "none adopted as the last anchor")
		Expect(getSubmission(ns, sub.Name).Status.Anchored).To(BeFalse())

		By("anchoring goes on: the next real anchor is today's first and covers the victim")
		submitFor(ns, newTestOperator(91, "Bystander"), "bystander", 2)
		Eventually(func() fv1.SubmissionStatus { return getSubmission(ns, sub.Name).Status }).Should(
			WithTransform(func(s fv1.SubmissionStatus) fv1.AnchorID { return s.AnchorRef }, Equal(fv1.AnchorID("anchor-"+today+"-001"))))
		Eventually(func() *fv1.AnchorSummary { return federationStatus(fed)().LastAnchor }).Should(
			WithTransform(func(a *fv1.AnchorSummary) fv1.AnchorID {
				if a == nil {
					return ""
				}
				return a.AnchorID
			}, Equal(fv1.AnchorID("anchor-"+today+"-001"))))

		By("no receipt is signed for a forged anchor, and one built from it does not verify")
		key := federationSigningKey(fed)
		for _, ca := range forged {
			_, err := federation.Receipt(currentFederation(fed), ca, key, nil, nil)
			Expect(err).To(MatchError(federation.ErrUntrusted))
		}
		raw, err := json.Marshal(federation.AnchorReceipt(forged[0]))
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "receipt.json"), raw, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "federation.pem"), []byte(currentFederation(fed).Status.PublicKeyPEM), 0o600)).To(Succeed())
		cmd := exec.Command(cairnBinary(), "federation", "verify", filepath.Join(dir, "receipt.json"),
			"--federation-key", filepath.Join(dir, "federation.pem"))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		Expect(errors.As(err, &exit)).To(BeTrue(), "cairn federation verify: %v: %s", err, out)
		Expect(exit.ExitCode()).To(Equal(3), "cairn federation verify: %s", out)
	})

	It("does not hold a federation key rotation up", func() {
		victim := newTestOperator(92, "Rotating")
		sub := getSubmission(ns, submitFor(ns, victim, "rotating", 3))
		forged := forgedAnchor(fed, "anchor-20000101-001", sub)
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		Eventually(anchorPhase(ns, forged.Name)).Should(Equal(fv1.PhaseAnchorRejected))

		rotateTo(fed, newTestOperator(93, ""))
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionKeyReady)(s.Conditions)
		}, Equal("True/"+fv1.ReasonKeyRotated)))
		Expect(getAnchor(ns, forged.Name).Status.ReceiptSignatures).To(BeEmpty(), "not re-signed")
	})
})

var _ = Describe("Pending submissions", func() {
	It("are bounded per operator: one beyond maxPendingPerOperator is refused until an anchor covers the rest", func() {
		ns := newNamespace()
		fed := newFederation(ns, func(f *fv1.Federation) {
			f.Spec.MaxPendingPerOperator = 2
			f.Spec.AnchorInterval = metav1.Duration{Duration: time.Minute}
		})
		op := newTestOperator(95, "Busy")
		first := submitFor(ns, op, "busy", 3)
		Expect(k8sClient.Create(ctx, op.submission(ns, "busy-2", op.next(3, 2)))).To(Succeed())
		Eventually(submissionStatus(ns, "busy-2")).Should(WithTransform(verdict, Equal(accepted)))
		Expect(k8sClient.Create(ctx, op.submission(ns, "busy-3", op.next(5, 2)))).To(Succeed())
		Eventually(submissionStatus(ns, "busy-3")).Should(WithTransform(verdict, Equal("ContinuityVerified=False/"+fv1.ReasonPendingLimitExceeded)))
		Expect(conditionReason(fv1.ConditionReady)(submissionStatus(ns, "busy-3")().Conditions)).To(Equal("False/" + fv1.ReasonPendingLimitExceeded))
		Eventually(func() string { return operatorStatus(ns, "busy")().Head.Submission }).Should(Equal(subName(ns, "busy-2")))
		Eventually(func() []string { return eventReasons(ns, subName(ns, "busy-3")) }).Should(ContainElement(fv1.ReasonPendingLimitExceeded))

		suiteClock.Step(time.Minute)
		touch(fed)
		for _, name := range []string{first, "busy-2"} {
			Eventually(submissionStatus(ns, name)).Should(WithTransform(func(s fv1.SubmissionStatus) bool { return s.Anchored }, BeTrue()))
		}
		deleteRefused(ns, "busy-3")
		Expect(k8sClient.Create(ctx, op.submission(ns, "busy-3-again", op.next(5, 2)))).To(Succeed())
		Eventually(submissionStatus(ns, "busy-3-again")).Should(WithTransform(verdict, Equal(accepted)))
	})
})

var buildCairn = sync.OnceValues(func() (string, error) {
	if err := os.MkdirAll(suiteLogs.Dir, 0o700); err != nil { // removed when the suite ends
		return "", err
	}
	bin := filepath.Join(suiteLogs.Dir, "cairn")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/cairn").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ../cmd/cairn: %w\n%s", err, out)
	}
	return bin, nil
})

// cairnBinary builds cmd/cairn once for the suite and returns its path.
func cairnBinary() string {
	GinkgoHelper()
	bin, err := buildCairn()
	Expect(err).NotTo(HaveOccurred())
	return bin
}
