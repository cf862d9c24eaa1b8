package controllers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// A restore, as docs/OPERATIONS.md "Backup and restore" does it: the Federation and its
// operators are applied again, their status gone, beside the log's directory and the
// Secrets, which stayed. Issue 33 found that this undid the federation's verdicts: a key
// rotated out (leaked) registered again under its victim's operator ID, every API
// suspension was lifted, a withdrawn operator came back Active and a rotated one Rejected.
var _ = Describe("Restore", Label("log"), func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("keeps every verdict the log records: key history, withdrawal, API suspension", func() {
		fed := newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
		rot, rotNew := newTestOperator(170, "Rotated Org"), testOperator{key: newTestOperator(171, "").key, org: "Rotated Org"}
		sus, wd := newTestOperator(172, "Suspended Org"), newTestOperator(173, "Withdrawn Org")
		thief := testOperator{key: rot.key, org: "Thief Org"} // rot's first key, leaked

		By("registering three operators; one rotates its key, one is suspended through the API, one withdraws")
		for name, op := range map[string]testOperator{"rot": rot, "sus": sus, "wd": wd} {
			Expect(k8sClient.Create(ctx, op.object(ns, name))).To(Succeed())
			Eventually(operatorStatus(ns, name)).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.RegistrationLogEntry }, Not(BeNil())))
		}
		rotation, err := protocol.NewKeyRotation(rot.key, rotNew.key, time.Now())
		Expect(err).NotTo(HaveOccurred())
		editOperator(ns, "rot", func(o *fv1.FederationOperator) {
			o.Spec.PublicKeyPEM = fv1.PublicKeyPEM(rotation.NewPublicKey)
			o.Spec.KeyRotation = &fv1.KeyRotation{RotationAt: fv1.Timestamp(rotation.RotationAt),
				OldKeySignature: fv1.Signature(rotation.OldKeySignature), NewKeySignature: fv1.Signature(rotation.NewKeySignature)}
		})
		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(func(s fv1.FederationOperatorStatus) bool {
			return len(s.KeyHistory) == 2 && s.KeyHistory[1].LogEntry != nil
		}, BeTrue()))
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			f := currentFederation(fed)
			f.Status.APISuspensions = append(f.Status.APISuspensions, fv1.APISuspension{
				OperatorSuspension: fv1.OperatorSuspension{OperatorID: sus.id(), Reason: "incident 9"}, SuspendedAt: metav1.Now()})
			return k8sClient.Status().Update(ctx, f)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "sus")).Should(WithTransform(func(s fv1.FederationOperatorStatus) bool {
			return s.Phase == fv1.PhaseSuspended && len(s.Suspensions) == 1 && s.Suspensions[0].LogEntry != nil
		}, BeTrue()))
		w := protocol.NewWithdrawal(wd.key, time.Now())
		editOperator(ns, "wd", func(o *fv1.FederationOperator) {
			o.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(w.At), Signature: fv1.Signature(w.Signature)}
		})
		Eventually(operatorStatus(ns, "wd")).Should(WithTransform(func(s fv1.FederationOperatorStatus) *fv1.LogEntry { return s.WithdrawalLogEntry }, Not(BeNil())))

		By("planting forged texts in the record book: a rotation of sus to another key, at the genesis record's index and past the log")
		book := filepath.Join(suiteLogs.recordsDir(fed), logIDOf(fed))
		forged, err := canonical.Marshal(protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: ns + "/fed",
			OperatorID: string(sus.id()), OldPublicKeyPEM: string(sus.pem()), NewPublicKeyPEM: string(newTestOperator(174, "").pem()),
			ValidFrom: time.Now().UTC().Format(time.RFC3339)})
		Expect(err).NotTo(HaveOccurred())
		at := federationStatus(fed)().GenesisLogEntry.LogIndex // signed by the federation, over other bytes
		Expect(os.WriteFile(filepath.Join(book, strconv.FormatInt(at, 10)+".json"), forged, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(book, "99999.json"), forged, 0o600)).To(Succeed())

		By("backing up the operators' specs, then deleting the Federation and every operator")
		var specs []fv1.FederationOperator
		for _, name := range []string{"rot", "sus", "wd"} {
			var fo fv1.FederationOperator
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &fo)).To(Succeed())
			specs = append(specs, fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: fo.Spec})
			Expect(k8sClient.Delete(ctx, &fo)).To(Succeed())
		}
		Expect(k8sClient.Delete(ctx, currentFederation(fed))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &fv1.Federation{}))
		}).Should(BeTrue())
		// A new manager process: the log and its book are read again from disk.
		Expect(suiteLogs.stop(ctx, client.ObjectKeyFromObject(fed))).To(Succeed())
		suiteLogs.restart(client.ObjectKeyFromObject(fed))

		By("restoring: the Federation, a thief's registration of the leaked key first, then the operators")
		newFederation(ns, nil)
		Expect(k8sClient.Create(ctx, thief.object(ns, "thief"))).To(Succeed())
		for i := range specs {
			Expect(k8sClient.Create(ctx, &specs[i])).To(Succeed())
		}

		Eventually(operatorStatus(ns, "thief")).Should(WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonDuplicateKey)))
		st := operatorStatus(ns, "thief")()
		Expect(st.Phase).To(Equal(fv1.PhaseRejected))
		Expect(conditionMessage(st, fv1.ConditionReady)).To(ContainSubstring("rotated it out"))

		Eventually(operatorStatus(ns, "rot")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
		st = operatorStatus(ns, "rot")()
		Expect(st.OperatorID).To(Equal(rot.id()))
		Expect(st.KeyHistory).To(HaveLen(2))
		Expect(st.KeyHistory[1].PublicKeyPEM).To(Equal(rotNew.pem()))
		Expect(st.KeyHistory[0].ValidUntil).NotTo(BeNil())
		Expect(reasonOf(fv1.ConditionReady)(st)).To(Equal(ReasonRestoredFromLog))

		Eventually(operatorStatus(ns, "wd")).Should(WithTransform(phase, Equal(fv1.PhaseWithdrawn)))
		Expect(operatorStatus(ns, "wd")().WithdrawalLogEntry).NotTo(BeNil())

		Eventually(operatorStatus(ns, "sus")).Should(WithTransform(phase, Equal(fv1.PhaseSuspended)))
		Expect(federationStatus(fed)().APISuspensions).To(ContainElement(WithTransform(func(a fv1.APISuspension) string {
			return string(a.OperatorID) + " " + a.Reason
		}, Equal(string(sus.id())+" incident 9"))))
		Expect(operatorStatus(ns, "sus")().KeyHistory).To(HaveLen(1), "a forged text in the book is no record")

		By("staying so: the thief stays out, nothing is resumed, and a new object for the withdrawn key is refused")
		Expect(k8sClient.Create(ctx, wd.object(ns, "wd-again"))).To(Succeed())
		Eventually(operatorStatus(ns, "wd-again")).Should(WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonDuplicateKey)))
		Expect(conditionMessage(operatorStatus(ns, "wd-again")(), fv1.ConditionReady)).To(ContainSubstring("withdrew"))
		Consistently(func() []fv1.OperatorPhase {
			return []fv1.OperatorPhase{operatorStatus(ns, "thief")().Phase, operatorStatus(ns, "sus")().Phase, operatorStatus(ns, "wd")().Phase}
		}, "2s").Should(Equal([]fv1.OperatorPhase{fv1.PhaseRejected, fv1.PhaseSuspended, fv1.PhaseWithdrawn}))
		Expect(operatorStatus(ns, "sus")().Suspensions).To(HaveLen(1), "no resumption was logged")

		By("accepting the rotated operator's submissions under its current key only")
		Expect(k8sClient.Create(ctx, rotNew.submissionAs(ns, "r1", rot.id(), rot.next(0, 3)))).To(Succeed())
		Eventually(submissionStatus(ns, "r1")).Should(WithTransform(verdict, Equal(accepted)))
	})
})

// conditionMessage is the message of s's condition t.
func conditionMessage(s fv1.FederationOperatorStatus, t fv1.ConditionType) string {
	for _, c := range s.Conditions {
		if c.Type == string(t) {
			return c.Message
		}
	}
	return ""
}

// logIDOf is the log ID of fed's transparency log, which names its record book.
func logIDOf(fed *fv1.Federation) string {
	GinkgoHelper()
	id, err := protocol.LogID(suiteLogKey(fed))
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(id)
}
