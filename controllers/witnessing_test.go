package controllers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/witnessd/witnesstest"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// startWitnesses starts n member witnesses of fed's embedded log and puts them in its
// spec, quorum of them required.
func startWitnesses(fed *fv1.Federation, n int, quorum int32) []*witnesstest.Witness {
	GinkgoHelper()
	var vkey string
	Eventually(func() (err error) {
		vkey, err = federation.LogVerifierKey(ctx, k8sClient, currentFederation(fed))
		return err
	}).Should(Succeed())
	dir := GinkgoT().TempDir()
	var ws []*witnesstest.Witness
	policy := &fv1.WitnessPolicy{Quorum: quorum}
	for i := range n {
		w, err := witnesstest.Start(fmt.Sprintf("w%d.member.example", i), vkey, dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)
		ws = append(ws, w)
		policy.Witnesses = append(policy.Witnesses, fv1.WitnessRef{Name: fmt.Sprintf("w%d", i), Key: w.VerifierKey, URL: w.URL})
	}
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		f := currentFederation(fed)
		f.Spec.TransparencyLog.Witnesses = policy
		return k8sClient.Update(ctx, f)
	})).To(Succeed())
	return ws
}

// cosignedBy returns the witnesses whose cosignatures on ca's proof checkpoint meet the
// policy of fed, nil when they do not.
func cosignedBy(fed *fv1.Federation, ca fv1.CrossAnchor) []string {
	GinkgoHelper()
	p, err := federation.WitnessPolicy(currentFederation(fed))
	Expect(err).NotTo(HaveOccurred())
	if ca.Status.InclusionProof == nil {
		return nil
	}
	v, err := p.Check([]byte(ca.Status.InclusionProof.Checkpoint))
	Expect(err).NotTo(HaveOccurred())
	if !v.Satisfied {
		return nil
	}
	return v.Witnessed()
}

// anchorNext has op submit two more entries after lastSeq, and returns the anchor that
// binds them, once it is logged.
func anchorNext(ns string, op testOperator, alias string, lastSeq int64) fv1.CrossAnchor {
	GinkgoHelper()
	before := crossAnchors(ns)
	Expect(k8sClient.Create(ctx, op.submission(ns, alias, op.next(lastSeq, 2)))).To(Succeed())
	var ca fv1.CrossAnchor
	Eventually(func() bool {
		for _, c := range crossAnchors(ns) {
			if !slices.ContainsFunc(before, func(b fv1.CrossAnchor) bool { return b.Name == c.Name }) && c.Status.Phase == fv1.PhaseAnchored {
				ca = c
				return true
			}
		}
		return false
	}).Should(BeTrue(), "an anchor of %s", alias)
	return ca
}

var _ = Describe("Witnessed logs", Label("log"), func() {
	BeforeEach(func() {
		if onRekor() {
			Skip("witnesses are the embedded log's: a Rekor log is witnessed by its own operator's")
		}
	})

	It("prove receipts against checkpoints 2 of 3 member witnesses cosigned, go on anchoring with witnesses down, and catch up when they return", func() {
		ns := newNamespace()
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		ws := startWitnesses(fed, 3, 2)
		a := newTestOperator(121, "Witnessed A")

		By("an anchor's proof comes to carry the cosignatures of two witnesses at least, and its receipt verifies")
		submitFor(ns, a, "wit-a", 3)
		first := anchorNext(ns, a, "wit-a-2", 3)
		Eventually(func() []string { return cosignedBy(fed, getAnchor(ns, first.Name)) }).Should(HaveLen(3))
		first = getAnchor(ns, first.Name)
		verifyReceipts(fed, &first)
		raw, err := federation.Receipt(currentFederation(fed), &first, federationSigningKey(fed), suiteLogKey(fed), nil)
		Expect(err).NotTo(HaveOccurred())
		var receipt struct {
			TLogEntry protocol.LogBundle `json:"tlog_entry"`
		}
		Expect(json.Unmarshal(raw, &receipt)).To(Succeed())
		policy, err := witness.ParsePolicy([]byte(federation.WitnessPolicyText(currentFederation(fed))))
		Expect(err).NotTo(HaveOccurred())
		v, err := policy.Check([]byte(receipt.TLogEntry.Verification.InclusionProof.Checkpoint))
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Satisfied).To(BeTrue(), "the receipt's checkpoint meets the policy")
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionWitnessed)(s.Conditions)
		}, Equal("True/Witnessed")))

		By("with one witness down, anchors still meet 2 of 3")
		ws[2].Stop()
		second := anchorNext(ns, a, "wit-a-3", 5)
		Eventually(func() []string { return cosignedBy(fed, getAnchor(ns, second.Name)) }).Should(ConsistOf("w0.member.example", "w1.member.example"))

		By("with two down, anchoring goes on, and the Federation says the quorum is not met")
		ws[1].Stop()
		third := anchorNext(ns, a, "wit-a-4", 7)
		Expect(third.Status.Phase).To(Equal(fv1.PhaseAnchored))
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionWitnessed)(s.Conditions)
		}, Equal("False/WitnessQuorumNotMet")))
		Consistently(func() []string { return cosignedBy(fed, getAnchor(ns, third.Name)) }, "1s").Should(BeNil())

		By("when a witness returns, the anchor's proof is renewed against a checkpoint that meets the policy")
		Expect(ws[1].Restart()).To(Succeed())
		Eventually(func() []string { return cosignedBy(fed, getAnchor(ns, third.Name)) }, "90s").Should(ContainElements("w0.member.example", "w1.member.example"))
		Eventually(federationStatus(fed), "90s").Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionWitnessed)(s.Conditions)
		}, Equal("True/Witnessed")))
	})

	It("are refused by every witness when the log is restored from an old copy of its directory, and the Federation says so", func() {
		ns := newNamespace()
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		ws := startWitnesses(fed, 3, 2)
		a := newTestOperator(122, "Forked A")
		submitFor(ns, a, "fork-a", 3)
		first := anchorNext(ns, a, "fork-a-2", 3)
		Eventually(func() []string { return cosignedBy(fed, getAnchor(ns, first.Name)) }).Should(HaveLen(3))

		By("a copy of the log's directory is taken, and the log grows past it")
		dir := filepath.Join(suiteLogs.Dir, ns, fed.Name)
		stopLog(fed)
		backup := filepath.Join(GinkgoT().TempDir(), "copy")
		Expect(os.CopyFS(backup, os.DirFS(dir))).To(Succeed())
		restartLog(fed)
		second := anchorNext(ns, a, "fork-a-3", 5)
		Eventually(func() []string { return cosignedBy(fed, getAnchor(ns, second.Name)) }).Should(HaveLen(3))
		size := getAnchor(ns, second.Name).Status.InclusionProof.TreeSize

		By("the copy is put back and the log grows on it: a fork")
		stopLog(fed)
		Expect(os.RemoveAll(dir)).To(Succeed())
		Expect(os.Rename(backup, dir)).To(Succeed())
		restartLog(fed)
		third := anchorNext(ns, a, "fork-a-4", 7)
		for n := int64(9); third.Status.InclusionProof.TreeSize <= size; n += 2 {
			third = anchorNext(ns, a, fmt.Sprintf("fork-a-%d", n), n)
		}
		Eventually(federationStatus(fed), "60s").Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionWitnessed)(s.Conditions)
		}, Equal("False/SplitViewRefused")))
		Consistently(func() []string { return cosignedBy(fed, getAnchor(ns, third.Name)) }, "1s").Should(BeNil())
		for _, w := range ws {
			origin, _, _ := strings.Cut(third.Status.InclusionProof.Checkpoint, "\n")
			cs, err := w.Witnessd().Conflicts(ctx, origin)
			Expect(err).NotTo(HaveOccurred())
			Expect(cs).NotTo(BeEmpty(), "witness %s kept the evidence", w.Name)
		}
	})
})
