package controllers

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// operatorStatus returns a function reading the operator's status, for Eventually.
func operatorStatus(ns, name string) func() fv1.FederationOperatorStatus {
	return func() fv1.FederationOperatorStatus {
		var fo fv1.FederationOperator
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &fo)).To(Succeed())
		return fo.Status
	}
}

func phase(s fv1.FederationOperatorStatus) fv1.OperatorPhase { return s.Phase }

func reasonOf(t fv1.ConditionType) func(fv1.FederationOperatorStatus) string {
	return func(s fv1.FederationOperatorStatus) string {
		if c := meta.FindStatusCondition(s.Conditions, string(t)); c != nil {
			return c.Reason
		}
		return ""
	}
}

var _ = Describe("FederationOperator registration", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("registers an operator applied with kubectl", func() {
		op := newTestOperator(1, "Acme Research")
		obj := op.object(ns, "acme")
		obj.APIVersion, obj.Kind = fv1.GroupVersion.String(), "FederationOperator"
		raw, err := yaml.Marshal(obj)
		Expect(err).NotTo(HaveOccurred())
		file := filepath.Join(GinkgoT().TempDir(), "acme.yaml")
		Expect(os.WriteFile(file, raw, 0o600)).To(Succeed())
		k := newKubectl()
		Expect(k.run("apply", "-f", file)).To(ContainSubstring("created"))

		Eventually(operatorStatus(ns, "acme")).Should(And(
			WithTransform(phase, Equal(fv1.PhaseActive)),
			WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonRegistered)),
		))
		st := operatorStatus(ns, "acme")()
		Expect(st.OperatorID).To(Equal(op.id()))
		Expect(st.RegisteredAt).NotTo(BeNil())
		Expect(st.KeyHistory).To(HaveLen(1))
		Expect(string(st.KeyHistory[0].Fingerprint)).To(Equal(protocol.Fingerprint(op.pub())))
		Expect(k.run("get", "fo", "-n", ns)).To(And(ContainSubstring(string(op.id())), ContainSubstring("Active")))
		Eventually(func() []string { return eventReasons(ns, "acme") }).Should(ContainElement(fv1.ReasonRegistered))
	})

	It("rejects a key another operator registered first, until that one is deleted", func() {
		op := newTestOperator(2, "First Org")
		Expect(k8sClient.Create(ctx, op.object(ns, "first"))).To(Succeed())
		Eventually(operatorStatus(ns, "first")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))

		// The same key with a valid proof for another organization's name.
		copycat := testOperator{key: op.key, org: "Second Org"}
		Expect(k8sClient.Create(ctx, copycat.object(ns, "second"))).To(Succeed())
		Eventually(operatorStatus(ns, "second")).Should(And(
			WithTransform(phase, Equal(fv1.PhaseRejected)),
			WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonDuplicateKey)),
		))
		Expect(operatorStatus(ns, "first")()).To(WithTransform(phase, Equal(fv1.PhaseActive)))
		Eventually(func() []string { return eventReasons(ns, "second") }).Should(ContainElement(fv1.ReasonDuplicateKey))

		Expect(k8sClient.Delete(ctx, op.object(ns, "first"))).To(Succeed())
		Eventually(operatorStatus(ns, "second")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))
	})

	It("rejects a proof of possession made for another name", func() {
		op := newTestOperator(3, "Honest Org")
		obj := op.object(ns, "liar")
		obj.Spec.OrgName = "Someone Else"
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, "liar")).Should(And(
			WithTransform(phase, Equal(fv1.PhaseRejected)),
			WithTransform(reasonOf(fv1.ConditionSignatureVerified), Equal(fv1.ReasonSignatureInvalid)),
		))
	})

	It("applies a signed withdrawal and refuses a stale one", func() {
		op := newTestOperator(4, "Leaving Org")
		obj := op.object(ns, "leaving")
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Eventually(operatorStatus(ns, "leaving")).Should(WithTransform(phase, Equal(fv1.PhaseActive)))

		withdraw := func(at time.Time) {
			w := protocol.NewWithdrawal(op.key, at)
			editOperator(ns, "leaving", func(o *fv1.FederationOperator) {
				o.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(w.At), Signature: fv1.Signature(w.Signature)}
			})
		}
		withdraw(time.Now().Add(-10 * time.Minute))
		Eventually(operatorStatus(ns, "leaving")).Should(WithTransform(reasonOf(fv1.ConditionSignatureVerified), Equal(fv1.ReasonWithdrawalInvalid)))
		Expect(phase(operatorStatus(ns, "leaving")())).To(Equal(fv1.PhaseActive))

		withdraw(time.Now())
		Eventually(operatorStatus(ns, "leaving")).Should(And(
			WithTransform(phase, Equal(fv1.PhaseWithdrawn)),
			WithTransform(reasonOf(fv1.ConditionReady), Equal(fv1.ReasonWithdrawn)),
		))
	})
})

// eventReasons lists the reasons of the Events about one object.
func eventReasons(ns, name string) []string {
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
