package controllers

import (
	"io/fs"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// copyLogDir copies the embedded log of Federation fed in namespace from to namespace to,
// as a restore of the log's volume into another cluster does.
func copyLogDir(from, to string) string {
	GinkgoHelper()
	src, dst := filepath.Join(suiteLogs.Dir, from, "fed"), filepath.Join(suiteLogs.Dir, to, "fed")
	Expect(filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})).To(Succeed())
	return dst
}

var _ = Describe("A Federation whose embedded log was restored", Label("log"), func() {
	It("gives the log no new key: it stays closed, loudly, until its own key Secret is back", func() {
		if onRekor() {
			Skip("the embedded log's key; a Rekor log's key is pinned in spec")
		}
		// The federation that wrote the log.
		old := newNamespace()
		first := newFederation(old, nil)
		Eventually(federationStatus(first)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
		var ownKey corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: old, Name: "fed-log-key"}, &ownKey)).To(Succeed())

		// Its log's directory restored into another namespace, without the key Secret.
		ns := newNamespace()
		dir := copyLogDir(old, ns)
		checkpoint, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
		Expect(err).NotTo(HaveOccurred())
		fed := newFederation(ns, nil)
		logReason := func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionLogReachable)(s.Conditions) }
		readyReason := func(s fv1.FederationStatus) string { return conditionReason(fv1.ConditionReady)(s.Conditions) }
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(logReason, Equal("False/"+fv1.ReasonLogKeyMissing)),
			WithTransform(readyReason, Equal("False/"+fv1.ReasonLogKeyMissing))))
		Eventually(func() []string { return eventReasons(ns, "fed") }).Should(ContainElement(fv1.ReasonLogKeyMissing))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fed-log-key"}, &corev1.Secret{}))).
			To(BeTrue(), "no key is generated for a log that exists")
		Expect(os.ReadFile(filepath.Join(dir, "checkpoint"))).To(Equal(checkpoint), "the log is not re-signed")
		_, err = federation.LogPublicKeyPEM(ctx, k8sClient, fed)
		Expect(err).To(MatchError(federation.ErrNoLogKey), "the API presents no log key either")

		// Another key in the Secret: refused just as loudly.
		otherKey, err := tlog.GenerateLogKey("cairn.federation/" + old + "/fed")
		Expect(err).NotTo(HaveOccurred())
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed-log-key"},
			Data: map[string][]byte{federation.LogKeySecretKey: []byte(otherKey)}}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		touchFederation(fed) // Secrets are not watched: a restore is noticed within logRetry
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(logReason, Equal("False/"+fv1.ReasonLogKeyMismatch)),
			WithTransform(readyReason, Equal("False/"+fv1.ReasonLogKeyMismatch))))
		Eventually(func() []string { return eventReasons(ns, "fed") }).Should(ContainElement(fv1.ReasonLogKeyMismatch))
		Expect(os.ReadFile(filepath.Join(dir, "checkpoint"))).To(Equal(checkpoint), "the log is not re-signed")
		Expect(federationStatus(fed)().GenesisLogEntry).To(BeNil())

		// The log's own key restored: it opens and the next record goes after the old ones.
		secret.Data = ownKey.Data
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		touchFederation(fed)
		Eventually(federationStatus(fed)).Should(And(
			WithTransform(logReason, Equal("True/"+fv1.ReasonLogReachable)),
			WithTransform(readyReason, Equal("True/"+fv1.ReasonKeyLoaded)),
			WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil()))))
		Expect(federationStatus(fed)().GenesisLogEntry.LogIndex).To(BeNumerically(">", federationStatus(first)().GenesisLogEntry.LogIndex),
			"the restored log grows from where it was")
	})
})
