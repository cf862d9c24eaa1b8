package controllers

import (
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// An operator ID is forever (ARCHITECTURE, trust rules): these specs replay the public
// registration of a key its operator rotated out, and make two objects claim one ID.
var _ = Describe("Operator identity", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	register := func(op testOperator, name string) *fv1.FederationOperator {
		GinkgoHelper()
		obj := op.object(ns, name)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, name)).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
		return obj
	}
	// rotate applies a rotation of obj from one key to another, signed by both, and
	// returns the generation it made.
	rotate := func(obj *fv1.FederationOperator, from, to testOperator) int64 {
		GinkgoHelper()
		rotation, err := protocol.NewKeyRotation(from.key, to.key, time.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			obj.Spec.PublicKeyPEM = fv1.PublicKeyPEM(rotation.NewPublicKey)
			obj.Spec.KeyRotation = &fv1.KeyRotation{RotationAt: fv1.Timestamp(rotation.RotationAt),
				OldKeySignature: fv1.Signature(rotation.OldKeySignature), NewKeySignature: fv1.Signature(rotation.NewKeySignature)}
			return k8sClient.Update(ctx, obj)
		})).To(Succeed())
		return obj.Generation
	}
	// registerRotated registers an operator of org with the key of seed, as name, and
	// rotates it to the key of seed+1; it returns both keys and the object.
	registerRotated := func(seed byte, org, name string) (first, second testOperator, obj *fv1.FederationOperator) {
		GinkgoHelper()
		first, second = newTestOperator(seed, org), testOperator{key: newTestOperator(seed+1, "").key, org: org}
		obj = register(first, name)
		rotate(obj, first, second)
		Eventually(operatorStatus(ns, name)).Should(WithTransform(func(s fv1.FederationOperatorStatus) int { return len(s.KeyHistory) }, Equal(2)))
		return first, second, obj
	}
	duplicate := And(WithTransform(phase, Equal(fv1.PhaseRejected)), WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonDuplicateKey)))

	It("refuses a replayed registration of a key its operator rotated out, and that key's submissions", func() {
		victim, _, _ := registerRotated(90, "Victim Org", "victim")

		By("applying the victim's first registration again: its key and its public proof of possession")
		Expect(k8sClient.Create(ctx, victim.object(ns, "replay"))).To(Succeed())
		Eventually(operatorStatus(ns, "replay")).Should(duplicate)
		Eventually(func() []string { return eventReasons(ns, "replay") }).Should(ContainElement(fv1.ReasonDuplicateKey))
		Expect(phase(operatorStatus(ns, "victim")())).To(Equal(fv1.PhaseActive))

		By("submitting under the victim's ID, signed by the rotated-out key")
		Expect(k8sClient.Create(ctx, victim.submission(ns, "old-key", victim.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "old-key")).Should(WithTransform(verdict, Equal("SignatureVerified=False/SignatureInvalid")))
		Expect(operatorStatus(ns, "victim")().Head).To(BeNil())
	})

	It("does not bring back a withdrawn operator that had rotated its key", func() {
		victim, second, obj := registerRotated(92, "Gone Org", "gone")
		w := protocol.NewWithdrawal(second.key, time.Now())
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			obj.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(w.At), Signature: fv1.Signature(signWithdrawal(second.key, string(victim.id()), w.At))}
			return k8sClient.Update(ctx, obj)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "gone")).Should(WithTransform(phase, Equal(fv1.PhaseWithdrawn)))

		By("registering either key it ever held again")
		Expect(k8sClient.Create(ctx, victim.object(ns, "replay-first"))).To(Succeed())
		Expect(k8sClient.Create(ctx, second.object(ns, "replay-second"))).To(Succeed())
		Eventually(operatorStatus(ns, "replay-first")).Should(duplicate)
		Eventually(operatorStatus(ns, "replay-second")).Should(duplicate)

		Expect(k8sClient.Create(ctx, victim.submission(ns, "old-key", victim.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "old-key")).Should(WithTransform(verdict, Equal("SignatureVerified=False/Withdrawn")))
		Expect(phase(operatorStatus(ns, "gone")())).To(Equal(fv1.PhaseWithdrawn))
	})

	It("keeps refusing a registration made before the victim's that later copies its proof", func() {
		victim := newTestOperator(94, "Early Org")
		squat := victim.object(ns, "squat")
		squat.Spec.ProofOfPossession = fv1.Signature(protocol.SignRegistration(newTestOperator(95, "").key, victim.org))
		Expect(k8sClient.Create(ctx, squat)).To(Succeed())
		Eventually(operatorStatus(ns, "squat")).Should(WithTransform(reasonOf(fv1.ConditionSignatureVerified), Equal(fv1.ReasonSignatureInvalid)))
		register(victim, "victim")

		By("copying the victim's public proof of possession into the older object")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(squat), squat)).To(Succeed())
			squat.Spec.ProofOfPossession = victim.object(ns, "").Spec.ProofOfPossession
			return k8sClient.Update(ctx, squat)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "squat")).Should(And(observed(squat.Generation), duplicate))
	})

	It("refuses a rotation to a key another operator holds or once held", func() {
		first, firstNext, _ := registerRotated(96, "Rotated Org", "a")
		other := newTestOperator(98, "Other Org")
		b := register(other, "b")

		for _, target := range []testOperator{first, firstNext} {
			gen := rotate(b, other, target)
			Eventually(operatorStatus(ns, "b")).Should(And(observed(gen),
				WithTransform(reasonOf(fv1.ConditionSignatureVerified), Equal(fv1.ReasonDuplicateKey))))
			st := operatorStatus(ns, "b")()
			Expect(st.KeyHistory).To(HaveLen(1), "the current key stays")
			Expect(meta.FindStatusCondition(st.Conditions, string(fv1.ConditionSignatureVerified)).Message).To(ContainSubstring(string(first.id())))
			Expect(st.Phase).To(Equal(fv1.PhaseActive))
		}
		Eventually(func() []string { return eventReasons(ns, "b") }).Should(ContainElement(fv1.ReasonDuplicateKey))
	})

	It("refuses to choose between two objects claiming one operator ID", func() {
		victim := newTestOperator(99, "Claimed Org")
		register(victim, "victim")

		By("a Rejected object naming the ID is never a claimant")
		liar := victim.object(ns, "liar")
		liar.Spec.OrgName = "Someone Else"
		Expect(k8sClient.Create(ctx, liar)).To(Succeed())
		Eventually(operatorStatus(ns, "liar")).Should(And(WithTransform(phase, Equal(fv1.PhaseRejected)),
			WithTransform(func(s fv1.FederationOperatorStatus) fv1.OperatorID { return s.OperatorID }, Equal(victim.id()))))
		Expect(k8sClient.Create(ctx, victim.submission(ns, "honest", victim.next(0, 10)))).To(Succeed())
		Eventually(submissionStatus(ns, "honest")).Should(WithTransform(verdict, Equal(accepted)))

		By("an Active object whose status claims the victim's ID, as if the registration check had failed")
		twin := newTestOperator(100, "Twin Org")
		register(twin, "twin")
		var fo fv1.FederationOperator
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "twin"}, &fo)).To(Succeed())
			fo.Status.OperatorID = victim.id()
			// The controller writes observedGeneration back from the manager's cache: then
			// that cache, which the Submission controller shares, holds this status.
			fo.Status.ObservedGeneration = 0
			return k8sClient.Status().Update(ctx, &fo)
		})).To(Succeed())
		Eventually(operatorStatus(ns, "twin")).Should(observed(fo.Generation))
		Expect(operatorStatus(ns, "twin")().OperatorID).To(Equal(victim.id()))

		Expect(k8sClient.Create(ctx, twin.submissionAs(ns, "twin-key", victim.id(), victim.next(10, 5)))).To(Succeed())
		Eventually(submissionStatus(ns, "twin-key")).Should(WithTransform(verdict, Equal("SignatureVerified=False/OperatorAmbiguous")))
		Eventually(func() []string { return eventReasons(ns, subName(ns, "twin-key")) }).Should(ContainElement(fv1.ReasonOperatorAmbiguous))
		Eventually(func() string { return operatorStatus(ns, "victim")().Head.Submission }).Should(Equal(subName(ns, "honest")))
	})
})

// observed matches an operator status that describes generation gen: a sign the
// controller has looked at the spec change it is asserted about.
func observed(gen int64) OmegaMatcher {
	return WithTransform(func(s fv1.FederationOperatorStatus) int64 { return s.ObservedGeneration }, BeNumerically(">=", gen))
}

// TestKeyIDs checks what federation.OperatorKeyIndex files an operator under: every key of its key
// history and its spec's key, each once.
func TestKeyIDs(t *testing.T) {
	k1, k2, k3 := newTestOperator(101, ""), newTestOperator(102, ""), newTestOperator(103, "")
	pemOf := func(o testOperator) fv1.PublicKeyPEM {
		text, err := protocol.MarshalPublicKeyPEM(o.pub())
		if err != nil {
			t.Fatal(err)
		}
		return fv1.PublicKeyPEM(text)
	}
	history := func(keys ...testOperator) []fv1.KeyRecord {
		var h []fv1.KeyRecord
		for _, k := range keys {
			h = append(h, fv1.KeyRecord{PublicKeyPEM: pemOf(k)})
		}
		return h
	}
	for name, tc := range map[string]struct {
		spec    fv1.PublicKeyPEM
		history []fv1.KeyRecord
		want    []fv1.OperatorID
	}{
		"not registered":        {pemOf(k1), nil, []fv1.OperatorID{k1.id()}},
		"registered":            {pemOf(k1), history(k1), []fv1.OperatorID{k1.id()}},
		"rotated":               {pemOf(k2), history(k1, k2), []fv1.OperatorID{k1.id(), k2.id()}},
		"rotation pending":      {pemOf(k3), history(k1, k2), []fv1.OperatorID{k1.id(), k2.id(), k3.id()}},
		"spec key unparseable":  {"junk", history(k1), []fv1.OperatorID{k1.id()}},
		"nothing parses at all": {"junk", nil, []fv1.OperatorID{}},
	} {
		t.Run(name, func(t *testing.T) {
			fo := &fv1.FederationOperator{Spec: fv1.FederationOperatorSpec{PublicKeyPEM: tc.spec},
				Status: fv1.FederationOperatorStatus{KeyHistory: tc.history}}
			got := federation.KeyIDs(fo)
			want := make([]string, len(tc.want))
			for i, id := range tc.want {
				want[i] = string(id)
			}
			if !slices.Equal(got, want) {
				t.Errorf("keyIDs = %v, want %v", got, want)
			}
		})
	}
}
