package controllers

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/mod/sumdb/note"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// logPublicKey is the key fed's log signs with.
func logPublicKey(fed *fv1.Federation) crypto.PublicKey {
	GinkgoHelper()
	log, err := suiteLogs.For(ctx, k8sClient, fed)
	Expect(err).NotTo(HaveOccurred())
	key, err := log.PublicKey(ctx)
	Expect(err).NotTo(HaveOccurred())
	return key
}

// embeddedCheckpoint is fed's log's latest checkpoint.
func embeddedCheckpoint(fed *fv1.Federation) (*protocol.Checkpoint, []byte, error) {
	log, err := suiteLogs.For(ctx, k8sClient, fed)
	if err != nil {
		return nil, nil, err
	}
	return log.(tlog.Checkpointer).Checkpoint(ctx)
}

var _ = Describe("Weekly log snapshots", Label("log"), func() {
	var (
		ns  string
		fed *fv1.Federation
		at  time.Time
		s   *logSnapshotter
	)
	BeforeEach(func() {
		ns = newNamespace()
		fed = newFederation(ns, nil)
		Eventually(federationStatus(fed)).Should(WithTransform(func(s fv1.FederationStatus) *fv1.LogEntry { return s.GenesisLogEntry }, Not(BeNil())))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fed), fed)).To(Succeed())
		at = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		s = &logSnapshotter{client: k8sClient, apiReader: k8sClient, logs: suiteLogs, recorder: events.NewFakeRecorder(10),
			interval: time.Hour, clock: clock{Now: func() time.Time { return at }}}
	})

	snapshots := func() map[string]string {
		var cm corev1.ConfigMap
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: federation.LogSnapshotsName(fed.Name)}, &cm)).To(Succeed())
		return cm.Data
	}

	It("keeps one verified checkpoint a week, taken once", func() {
		Expect(s.snapshot(ctx, fed)).To(Succeed())
		first := snapshots()
		Expect(first).To(HaveKey("2026-W48"))
		logKey := logPublicKey(fed)
		cp, err := protocol.OpenCheckpoint([]byte(first["2026-W48"]), logKey)
		Expect(err).NotTo(HaveOccurred(), "the snapshot is the log's signed note")
		Expect(cp.Size).To(BeNumerically(">=", 1), "it covers at least the genesis record")

		By("a second look in the same week changes nothing")
		Expect(s.snapshot(ctx, fed)).To(Succeed())
		Expect(snapshots()).To(Equal(first))

		By("the next week gets its own")
		at = at.Add(7 * 24 * time.Hour)
		Expect(s.snapshot(ctx, fed)).To(Succeed())
		Expect(snapshots()).To(HaveKey("2026-W49"))
		Expect(snapshots()["2026-W48"]).To(Equal(first["2026-W48"]))
	})

	It("refuses a checkpoint that goes back on the last snapshot, with a Warning", func() {
		if onRekor() {
			Skip("the attack needs the log's private key to sign the forged larger checkpoint; the local Rekor keeps its own")
		}
		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: fed.Name + "-log-key"}, &secret)).To(Succeed())
		signer, err := note.NewSigner(string(secret.Data[federation.LogKeySecretKey]))
		Expect(err).NotTo(HaveOccurred())
		current, _, err := embeddedCheckpoint(fed)
		Expect(err).NotTo(HaveOccurred())
		root := sha256.Sum256([]byte("a tree the log never had"))
		forged, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", current.Origin, current.Size+100,
			base64.StdEncoding.EncodeToString(root[:]))}, signer)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: federation.LogSnapshotsName(fed.Name)},
			Data: map[string]string{"2026-W47": string(forged)}})).To(Succeed())

		Expect(s.snapshot(ctx, fed)).To(MatchError(ContainSubstring("fewer than the")))
		Expect(snapshots()).NotTo(HaveKey("2026-W48"), "nothing is recorded over the inconsistency")
		Expect(s.recorder.(*events.FakeRecorder).Events).To(Receive(ContainSubstring(ReasonLogInconsistent)))
	})
})
