package webhook_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/manager"
)

// attack is an object a `kubectl apply` could send that the controllers refuse in status
// and the webhooks refuse at once.
type attack struct {
	name string
	// make builds the object under name; it runs once without the webhooks and once with.
	make func(t *testing.T, name string) client.Object
	// reason is the controller's status reason, and is in the webhook's refusal too.
	reason string
	// field is the field the webhook's refusal names.
	field string
}

// TestAdmissionWebhooks runs one API server (envtest) and one manager, manager.New's
// with the webhooks enabled, serving the configuration of config/webhook on envtest's
// address with envtest's certificates. First, without the webhook configuration, every
// attack is created and the controllers reject it later in status (the "before"); then,
// once the API server calls the webhooks, every attack is refused at Create with its
// reason (the "after") and honest objects still pass.
func TestAdmissionWebhooks(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	g := newG(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { cancel(); g.Expect(env.Stop()).To(Succeed()) })
	// The webhook configuration is installed only after the "before": envtest makes its
	// serving certificate and address now, for the manager.
	hooks := &envtest.WebhookInstallOptions{Paths: []string{filepath.Join("..", "config", "webhook")}, LocalServingHost: "127.0.0.1"}
	g.Expect(hooks.PrepWithoutInstalling()).To(Succeed())
	t.Cleanup(func() { _ = hooks.Cleanup() })

	// The manager cairn manager --enable-webhooks builds, on envtest's address and
	// certificates.
	o := manager.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress, o.LogDir = "0", "0", t.TempDir()
	o.FederationBindAddress = "0" // not :8088, which other tests of the run may hold
	o.Webhooks = manager.WebhookOptions{Enable: true, Host: hooks.LocalServingHost, Port: hooks.LocalServingPort, CertDir: hooks.LocalServingCertDir}
	mgr, err := manager.New(ctx, cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	stopped := make(chan struct{})
	go func() { _ = mgr.Start(ctx); close(stopped) }()
	// The manager stops before the API server, which otherwise waits past envtest's
	// timeout for the watches of a manager still stopping (about a second with a
	// Federation's controllers to stop).
	t.Cleanup(func() { cancel(); <-stopped })
	scheme := manager.NewScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	ns := "admission"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	acme, rotator, mallory := newOrg(1, "Acme"), newOrg(2, "Rotator"), newOrg(3, "Mallory")
	rotated, later := newOrg(4, "Rotator"), newOrg(5, "Rotator")

	// Acme is registered; Rotator registered and rotated to a second key, so that its first
	// key is one it held, not one it holds.
	g.Expect(c.Create(ctx, acme.operator(t, ns, "acme"))).To(Succeed())
	rot := rotator.operator(t, ns, "rotator")
	g.Expect(c.Create(ctx, rot)).To(Succeed())
	waitPhase(ctx, g, c, client.ObjectKeyFromObject(rot), fv1.PhaseActive)
	waitPhase(ctx, g, c, client.ObjectKey{Namespace: ns, Name: "acme"}, fv1.PhaseActive)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rot), rot)).To(Succeed())
	rotator.rotateTo(t, rot, rotated)
	g.Expect(c.Update(ctx, rot)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rot), rot)).To(Succeed())
		g.Expect(rot.Status.KeyHistory).To(HaveLen(2))
	}).Should(Succeed())

	attacks := []attack{
		{name: "small-order key", reason: fv1.ReasonKeyInvalid, field: "spec.publicKeyPEM", make: func(t *testing.T, name string) client.Object {
			fo := mallory.operator(t, ns, name)
			fo.Spec.PublicKeyPEM = smallOrderPEM()
			return fo
		}},
		{name: "forged proof of possession of Acme's key", reason: fv1.ReasonSignatureInvalid, field: "spec.proofOfPossession", make: func(t *testing.T, name string) client.Object {
			fo := mallory.operator(t, ns, name)
			fo.Spec.PublicKeyPEM = acme.pem(t)
			return fo
		}},
		{name: "the key Acme holds, with its public proof", reason: fv1.ReasonDuplicateKey, field: "spec.publicKeyPEM", make: func(t *testing.T, name string) client.Object {
			return acme.operator(t, ns, name)
		}},
		{name: "the key Rotator held before its rotation", reason: fv1.ReasonDuplicateKey, field: "spec.publicKeyPEM", make: func(t *testing.T, name string) client.Object {
			return rotator.operator(t, ns, name)
		}},
		{name: "a submission whose header Mallory signed for Acme's key", reason: fv1.ReasonSignatureInvalid, field: "spec.signedHeader", make: func(t *testing.T, name string) client.Object {
			sub := acme.submission(t, ns, name)
			sub.Spec.Signature = sign(mallory.key, []byte(sub.Spec.SignedHeader))
			return sub
		}},
		{name: "a submission whose signed header was edited", reason: fv1.ReasonSignatureInvalid, field: "spec.signedHeader", make: func(t *testing.T, name string) client.Object {
			sub := acme.submission(t, ns, name)
			sub.Spec.SignedHeader = strings.Replace(sub.Spec.SignedHeader, acme.hash("hmac", submissionSeq), acme.hash("hmac", submissionSeq-1), 1)
			sub.Spec.LastHMACHash = fv1.Hash(acme.hash("hmac", submissionSeq-1)) // the spec agrees with the edited header
			return sub
		}},
		{name: "a submission whose entry count is not its header's", reason: fv1.ReasonHeaderMismatch, field: "spec.entryCount", make: func(t *testing.T, name string) client.Object {
			sub := acme.submission(t, ns, name)
			sub.Spec.EntryCount = submissionSeq + 1
			return sub
		}},
		{name: "a submission not named after its segment", reason: fv1.ReasonNameNotCanonical, field: "metadata.name", make: func(t *testing.T, name string) client.Object {
			return acme.submission(t, ns, name) // a header Acme signed, under a name of its own: a second export of seq 1 could sit beside it
		}},
		{name: "a submission whose last hash is not its header's", reason: fv1.ReasonHeaderMismatch, field: "spec.lastHMACHash", make: func(t *testing.T, name string) client.Object {
			sub := acme.submission(t, ns, name)
			sub.Spec.LastHMACHash = fv1.Hash(acme.hash("hmac", submissionSeq-1))
			return sub
		}},
	}

	t.Run("before: created, and rejected later in status", func(t *testing.T) {
		g := newG(t)
		for i, a := range attacks {
			obj := a.make(t, objectName("before", i))
			g.Expect(c.Create(ctx, obj)).To(Succeed(), a.name)
			g.Eventually(func(g Gomega) {
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				g.Expect(readyReason(obj)).To(Equal(a.reason), a.name)
			}).Should(Succeed())
			t.Logf("before: %s: created; the controller later set Ready=False %s", a.name, a.reason)
		}
	})

	g.Expect(hooks.Install(cfg)).To(Succeed())
	// The API server reads its webhook configuration through an informer: wait until it
	// calls the webhook (a refusal that names the field), not only until the object exists.
	g.Eventually(func() error {
		return c.Create(ctx, attacks[0].make(t, "probe-"+time.Now().Format("150405.000000000")[7:]))
	}).Should(MatchError(ContainSubstring("spec.publicKeyPEM")))

	t.Run("after: refused at Create with the reason", func(t *testing.T) {
		g := newG(t)
		for i, a := range attacks {
			err := c.Create(ctx, a.make(t, objectName("after", i)))
			g.Expect(err).To(MatchError(And(ContainSubstring("admission webhook"), ContainSubstring("denied the request"),
				ContainSubstring(a.field+": Invalid value: "+a.reason))), a.name)
			g.Expect(apierrors.ReasonForError(err)).To(Equal(metav1.StatusReasonInvalid), a.name)
			g.Expect(err.Error()).NotTo(ContainSubstring(acme.hash("hmac", submissionSeq)), "a refusal never states the hash that would pass")
			t.Logf("after: %s: %v", a.name, err)
		}
	})

	t.Run("a key rotation to a key another operator held is refused", func(t *testing.T) {
		g := newG(t)
		fo := mallory.operator(t, ns, "mallory")
		g.Expect(c.Create(ctx, fo)).To(Succeed())
		waitPhase(ctx, g, c, client.ObjectKeyFromObject(fo), fv1.PhaseActive)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(fo), fo)).To(Succeed())
		mallory.rotateTo(t, fo, rotator) // Rotator's first key: its holder's ID forever
		err := c.Update(ctx, fo)
		g.Expect(err).To(MatchError(And(ContainSubstring("spec.publicKeyPEM"), ContainSubstring(fv1.ReasonDuplicateKey),
			ContainSubstring("operator rotator (op_"), ContainSubstring("the new key"))))
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(fo), fo)).To(Succeed())
		mallory.rotateTo(t, fo, later)
		fo.Spec.KeyRotation.OldKeySignature = fo.Spec.KeyRotation.NewKeySignature // not signed by the current key
		g.Expect(c.Update(ctx, fo)).To(MatchError(And(ContainSubstring("spec.keyRotation"), ContainSubstring(fv1.ReasonKeyRotationInvalid))))
	})

	t.Run("a second Federation in a namespace is refused", func(t *testing.T) {
		g := newG(t)
		ns := "one-federation"
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		fed := func(name string) *fv1.Federation {
			return &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}}}
		}
		g.Expect(c.Create(ctx, fed("first"))).To(Succeed(), "the namespace's first Federation")
		err := c.Create(ctx, fed("second"))
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
		g.Expect(err).To(MatchError(And(ContainSubstring(`admission webhook "vfederation-v1alpha1.federation.cairn.dev" denied the request`),
			ContainSubstring("namespace one-federation already has Federation first"))))
		t.Logf("refused: %v", err)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(fed("second")), &fv1.Federation{})).To(MatchError(ContainSubstring("not found")))
	})

	t.Run("honest objects pass", func(t *testing.T) {
		g := newG(t)
		g.Expect(c.Create(ctx, newOrg(6, "Honest").operator(t, ns, "honest"))).To(Succeed())
		sub := acme.submission(t, ns, federation.SubmissionName(acme.id(), 1))
		g.Expect(c.Create(ctx, sub)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(sub), sub)).To(Succeed())
			g.Expect(sub.Status.ContinuityVerified).To(BeTrue())
		}).Should(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rot), rot)).To(Succeed())
		rotated.rotateTo(t, rot, later)
		g.Expect(c.Update(ctx, rot)).To(Succeed(), "an honest key rotation")
		g.Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rot), rot)).To(Succeed())
			g.Expect(rot.Status.KeyHistory).To(HaveLen(3))
		}).Should(Succeed())
		// An object written before the webhooks, which they would refuse, can still be
		// relabelled (and so have its finalizers removed and be deleted).
		old := &fv1.FederationOperator{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName("before", 0)}, old)).To(Succeed())
		old.Labels = map[string]string{"reviewed": "true"}
		g.Expect(c.Update(ctx, old)).To(Succeed())
		g.Expect(c.Delete(ctx, old)).To(Succeed())
	})
}

// newG is t's Gomega, with time for the controllers beside the API server on two busy
// cores.
func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	return g
}

func objectName(phase string, i int) string { return phase + "-" + string(rune('a'+i)) }

// waitPhase waits until the FederationOperator at key is in phase.
func waitPhase(ctx context.Context, g *WithT, c client.Client, key client.ObjectKey, phase fv1.OperatorPhase) {
	g.Eventually(func(g Gomega) {
		fo := &fv1.FederationOperator{}
		g.Expect(c.Get(ctx, key, fo)).To(Succeed())
		g.Expect(fo.Status.Phase).To(Equal(phase))
	}).Should(Succeed())
}

// readyReason is the reason of obj's Ready condition, "" without one.
func readyReason(obj client.Object) string {
	var conds []metav1.Condition
	switch o := obj.(type) {
	case *fv1.FederationOperator:
		conds = o.Status.Conditions
	case *fv1.Submission:
		conds = o.Status.Conditions
	}
	if ready := meta.FindStatusCondition(conds, string(fv1.ConditionReady)); ready != nil && ready.Status == metav1.ConditionFalse {
		return ready.Reason
	}
	return ""
}
