package controllers

import (
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// newFederation creates a Federation with the embedded log.
func newFederation(ns string, change func(*fv1.Federation)) *fv1.Federation {
	GinkgoHelper()
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed"},
		Spec: fv1.FederationSpec{AnchorInterval: metav1.Duration{Duration: 6 * time.Hour}, MinParticipants: 1,
			TransparencyLog: suiteLog()}}
	if change != nil {
		change(fed)
	}
	Expect(k8sClient.Create(ctx, fed)).To(Succeed())
	return fed
}

// currentFederation reads fed as it is now, with the key history federation.Receipt checks against.
func currentFederation(fed *fv1.Federation) *fv1.Federation {
	GinkgoHelper()
	var f fv1.Federation
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
	return &f
}

func federationStatus(fed *fv1.Federation) func() fv1.FederationStatus {
	return func() fv1.FederationStatus {
		var f fv1.Federation
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), &f)).To(Succeed())
		return f.Status
	}
}

func conditionReason(t fv1.ConditionType) func([]metav1.Condition) string {
	return func(cs []metav1.Condition) string {
		if c := meta.FindStatusCondition(cs, string(t)); c != nil {
			return string(c.Status) + "/" + c.Reason
		}
		return ""
	}
}

// federationSigningKey reads the federation's key from its Secret, as the controllers do.
func federationSigningKey(fed *fv1.Federation) ed25519.PrivateKey {
	GinkgoHelper()
	var s corev1.Secret
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: fed.Name + "-signing-key"}, &s)).To(Succeed())
	key, err := protocol.ParsePrivateKeyPEM(s.Data[federation.SigningKeySecretKey])
	Expect(err).NotTo(HaveOccurred())
	return key
}

func crossAnchors(ns string) []fv1.CrossAnchor {
	var list fv1.CrossAnchorList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

// submitFor registers op (under name) and has it submit its first count entries.
func submitFor(ns string, op testOperator, name string, count int64) string {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, op.object(ns, name))).To(Succeed())
	Eventually(operatorStatus(ns, name)).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
	sub := name + "-1"
	Expect(k8sClient.Create(ctx, op.submission(ns, sub, op.next(0, count)))).To(Succeed())
	Eventually(submissionStatus(ns, sub)).Should(WithTransform(verdict, Equal(accepted)))
	return sub
}

// suiteLogKey returns the public key of fed's transparency log.
func suiteLogKey(fed *fv1.Federation) crypto.PublicKey {
	GinkgoHelper()
	log, err := suiteLogs.For(ctx, k8sClient, fed)
	Expect(err).NotTo(HaveOccurred())
	key, err := log.PublicKey(ctx)
	Expect(err).NotTo(HaveOccurred())
	return key
}

// verifyReceipts checks the receipt of ca for each participant offline: the federation's
// signature and hash, then the log's proof bundle against the log's key, and that the log
// entry records this anchor under the federation's key.
func verifyReceipts(fed *fv1.Federation, ca *fv1.CrossAnchor) {
	GinkgoHelper()
	key := federationSigningKey(fed)
	fedPub := key.Public().(ed25519.PublicKey)
	log, err := suiteLogs.For(ctx, k8sClient, fed)
	Expect(err).NotTo(HaveOccurred())
	logKey, err := log.PublicKey(ctx)
	Expect(err).NotTo(HaveOccurred())
	raw, err := federation.Receipt(currentFederation(fed), ca, key, logKey, nil)
	Expect(err).NotTo(HaveOccurred())
	for range ca.Spec.Participants { // each participant is handed the same receipt
		report, err := protocol.VerifyReceipt(raw, fedPub)
		Expect(err).NotTo(HaveOccurred())
		Expect(report.Checks[len(report.Checks)-1]).To(And(HaveField("Name", "tlog_entry"), HaveField("OK", true)),
			"the log leg is verified under the log key the receipt signs")
		r := report.Receipt
		Expect(*r.TLogLogIndex).To(Equal(ca.Status.LogEntry.LogIndex))
		Expect(protocol.VerifyReceiptLog(r, protocol.LogVerifyOptions{Key: logKey})).To(Succeed())
		var bundle protocol.LogBundle
		Expect(json.Unmarshal(r.TLogEntry, &bundle)).To(Succeed())
		body, err := protocol.VerifyLogBundle(&bundle, protocol.LogVerifyOptions{Key: logKey})
		Expect(err).NotTo(HaveOccurred())
		content, err := protocol.CrossAnchorLogContent(r.CrossAnchorHash)
		Expect(err).NotTo(HaveOccurred())
		Expect(protocol.VerifyHashedRekord(body, content, fedPub)).To(Succeed())
	}
	if onRekorV2() {
		verifySigstoreBundle(fed, ca, logKey)
	}
}

var _ = Describe("Federation", Label("log"), func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("generates its keys, publishes the public key and logs the genesis record once", func() {
		fed := newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionKeyReady)(s.Conditions) }, Equal("True/KeyGenerated")),
			WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())),
			WithTransform(func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionLogReachable)(s.Conditions) }, Equal("True/LogReachable")),
		))
		st := federationStatus(fed)()
		key := federationSigningKey(fed)
		Expect(st.PublicKeyFingerprint).To(Equal(fv1.Hash(protocol.Fingerprint(key.Public().(ed25519.PublicKey)))))
		secrets := []string{"fed-signing-key", "fed-admin"}
		if !onRekor() {
			secrets = append(secrets, "fed-log-key") // the embedded log's checkpoint key
		}
		for _, name := range secrets {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})).To(Succeed(), name)
		}
		genesis := st.GenesisLogEntry.LogIndex
		if !onRekor() {
			Expect(genesis).To(BeZero(), "the first record of the embedded log")
		}
		// Changing the Federation neither regenerates the key nor logs the genesis again,
		// once the controller has seen the change.
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
			fed.Spec.MinParticipants = 2
			return k8sClient.Update(ctx, fed)
		})).To(Succeed())
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) int64 { return s.ObservedGeneration }, Equal(fed.Generation)))
		Expect(federationStatus(fed)().GenesisLogEntry.LogIndex).To(Equal(genesis))
		Expect(federationSigningKey(fed)).To(Equal(key))
	})

	It("never generates a key in place of a deleted signing-key Secret: it says so until the Secret is back", func() {
		fed := newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionKeyReady)(s.Conditions) }, Equal("True/KeyGenerated")))
		fingerprint := federationStatus(fed)().PublicKeyFingerprint
		var saved corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fed-signing-key"}, &saved)).To(Succeed())
		Expect(k8sClient.Delete(ctx, &saved)).To(Succeed())
		touchFederation(fed) // the controller does not watch Secrets: any change reconciles

		keyReason := func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionKeyReady)(s.Conditions) }
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(keyReason, Equal("False/"+fv1.ReasonKeyMissing)),
			WithTransform(func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionReady)(s.Conditions) }, Equal("False/"+fv1.ReasonKeyMissing))))
		Eventually(func() []string { return eventReasons(ns, "fed") }).Should(ContainElement(fv1.ReasonKeyMissing))
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fed-signing-key"}, &corev1.Secret{}))
		}, "2s").Should(BeTrue(), "no key generated in the deleted one's place")
		Expect(federationStatus(fed)().PublicKeyFingerprint).To(Equal(fingerprint))

		restored := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: saved.Name, Labels: saved.Labels}, Data: saved.Data}
		Expect(k8sClient.Create(ctx, &restored)).To(Succeed())
		touchFederation(fed)
		Eventually(federationStatus(fed)).Should(WithTransform(keyReason, Equal("True/KeyLoaded")))
		Expect(federationStatus(fed)().PublicKeyFingerprint).To(Equal(fingerprint))
	})

	It("uses a signing key that is already in its Secret", func() {
		op := newTestOperator(30, "key owner")
		text, err := protocol.MarshalPrivateKeyPEM(op.key)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed-signing-key"},
			Data: map[string][]byte{federation.SigningKeySecretKey: text}})).To(Succeed())
		fed := newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) fv1.PublicKeyPEM { return s.PublicKeyPEM }, Equal(op.pem())))
		Expect(conditionReason(fv1.ConditionKeyReady)(federationStatus(fed)().Conditions)).To(Equal("True/KeyLoaded"))
	})

	It("anchors once pendingThreshold submissions wait, and each participant's receipt verifies offline", func() {
		threshold := int32(3)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		var subs []string
		for i := range 3 {
			subs = append(subs, submitFor(ns, newTestOperator(byte(40+i), fmt.Sprintf("Org %d", i)), fmt.Sprintf("op%d", i), int64(10+i)))
		}
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		ca := crossAnchors(ns)[0]
		at, err := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(BeTemporally("~", suiteClock.Now(), time.Minute), "anchored at the controllers' clock")
		Expect(ca.Name).To(Equal("anchor-"+at.Format("20060102")+"-001"), "the first anchor of the day it was made")
		Expect(ca.Spec.Participants).To(HaveLen(3))
		for _, s := range subs {
			Eventually(submissionStatus(ns, s)).Should(WithTransform(func(st fv1.SubmissionStatus) fv1.AnchorID { return st.AnchorRef }, Equal(ca.Spec.AnchorID)))
		}
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, ca.Name).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		anchored := getAnchor(ns, ca.Name)
		Expect(conditionReason(fv1.ConditionReady)(anchored.Status.Conditions)).To(Equal("True/Anchored"))
		verifyReceipts(fed, &anchored)
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(func(s fv1.FederationStatus) int32 { return s.PendingCount }, BeZero()),
			WithTransform(func(s fv1.FederationStatus) int32 { return s.OperatorCount }, Equal(int32(3))),
			WithTransform(func(s fv1.FederationStatus) int32 { return s.TotalOperators }, Equal(int32(3))),
		))
		Eventually(func() []string { return eventReasons(ns, "op0") }).Should(ContainElement(fv1.ReasonAnchored))
		Expect(testutil.ToFloat64(anchorsTotal.WithLabelValues(ns, fed.Name))).To(BeEquivalentTo(1))
		Expect(testutil.ToFloat64(submissionsTotal.WithLabelValues("accepted", fv1.ReasonVerified))).To(BeNumerically(">=", 3))
		Expect(testutil.CollectAndCount(logUploadSeconds)).To(BeNumerically(">=", 1))
	})

	It("waits for minParticipants operators", func() {
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold, f.Spec.MinParticipants = &threshold, 2 })
		submitFor(ns, newTestOperator(50, "Alone"), "alone", 5)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) string {
			return conditionReason(fv1.ConditionAnchored)(s.Conditions)
		}, Equal("False/NotEnoughParticipants")))
		Expect(crossAnchors(ns)).To(BeEmpty())
		submitFor(ns, newTestOperator(51, "Company"), "company", 7)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		Expect(crossAnchors(ns)[0].Spec.Participants).To(HaveLen(2))
	})

	It("anchors at the interval without a threshold", func() {
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.AnchorInterval = metav1.Duration{Duration: time.Minute} })
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
		submitFor(ns, newTestOperator(52, "Patient"), "patient", 3)
		// The controller has seen the submission (it counts it) and scheduled the run an
		// interval after the Federation's creation: nothing is anchored before then.
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(func(s fv1.FederationStatus) int32 { return s.PendingCount }, Equal(int32(1))),
			WithTransform(func(s fv1.FederationStatus) time.Time { return s.NextAnchorTime.Time },
				BeTemporally("~", fed.CreationTimestamp.Add(time.Minute), time.Second)),
		))
		Expect(crossAnchors(ns)).To(BeEmpty())

		suiteClock.Step(time.Minute)
		touch(fed) // the controller would wake at the interval; the stepped clock says it is there
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		at, err := protocol.ParseAnchoredAt(crossAnchors(ns)[0].Spec.AnchoredAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(BeTemporally(">=", fed.CreationTimestamp.Add(time.Minute)))
		Eventually(func() time.Time { return federationStatus(fed)().NextAnchorTime.Time }).Should(BeTemporally("~", at.Add(time.Minute), 2*time.Second))
	})

	It("keeps an anchor PendingTLog while the log is down, retrying on the schedule, and completes it after restart", func() {
		threshold := int32(1)
		fed := newFederation(ns, func(f *fv1.Federation) { f.Spec.PendingThreshold = &threshold })
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
		stopLog(fed)
		DeferCleanup(func() { restartLog(fed) })
		submitFor(ns, newTestOperator(53, "Unlucky"), "unlucky", 4)
		Eventually(func() []fv1.CrossAnchor { return crossAnchors(ns) }).Should(HaveLen(1))
		ca := crossAnchors(ns)[0].Name
		Eventually(func() fv1.CrossAnchorStatus { return getAnchor(ns, ca).Status }).Should(And(
			WithTransform(func(s fv1.CrossAnchorStatus) fv1.CrossAnchorPhase { return s.Phase }, Equal(fv1.PhasePendingTLog)),
			WithTransform(func(s fv1.CrossAnchorStatus) int32 { return s.Attempts }, BeNumerically(">=", 3)),
		))
		st := getAnchor(ns, ca).Status
		Expect(st.NextRetryTime).NotTo(BeNil())
		Expect(conditionReason(fv1.ConditionAnchored)(st.Conditions)).To(Equal("False/PendingTLog"))

		restartLog(fed)
		Eventually(func() fv1.CrossAnchorPhase { return getAnchor(ns, ca).Status.Phase }).Should(Equal(fv1.PhaseAnchored))
		anchored := getAnchor(ns, ca)
		if !onRekor() {
			Expect(anchored.Status.LogEntry.LogIndex).To(Equal(int64(1))) // after the genesis record, once
		}
		verifyReceipts(fed, &anchored)
	})
})

// touch changes an annotation of obj, so that its controller reconciles it.
func touch(obj client.Object) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		obj.SetAnnotations(map[string]string{"cairn.test/touched": time.Now().Format(time.RFC3339Nano)})
		return k8sClient.Update(ctx, obj)
	})).To(Succeed())
}

func getAnchor(ns, name string) fv1.CrossAnchor {
	GinkgoHelper()
	var ca fv1.CrossAnchor
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &ca)).To(Succeed())
	return ca
}
