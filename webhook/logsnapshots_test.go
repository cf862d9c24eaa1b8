package webhook

import (
	"net/http"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/mod/sumdb/note"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
)

var _ = Describe("GET /federation/log/snapshots", func() {
	It("serves the weekly checkpoints that verify under the log key, newest first, and no forged one", func() {
		s := newServer(Options{LogDir: logDir})
		var real []byte
		Eventually(func() error {
			var err error
			real, err = os.ReadFile(filepath.Join(logDir, fedKey.Namespace, fedKey.Name, "checkpoint"))
			return err
		}).Should(Succeed())
		By("storing the real checkpoint, one signed by another key with the same origin, and a stray key")
		otherKey, err := tlog.GenerateLogKey("x")
		Expect(err).NotTo(HaveOccurred())
		signer, err := note.NewSigner(otherKey)
		Expect(err).NotTo(HaveOccurred())
		text := string(real[:len(real)-len(signatureLines(real))-1]) // the text, ending in its LF
		forged, err := note.Sign(&note.Note{Text: text}, signer)
		Expect(err).NotTo(HaveOccurred())
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fedKey.Namespace, Name: federation.LogSnapshotsName(fedKey.Name)},
			Data: map[string]string{"2026-W40": string(real), "2026-W47": string(forged), "notes": "not a week"}}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, cm)).To(Succeed()) })

		a := do(s, http.MethodGet, "/federation/log/snapshots", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		snaps := a.body["snapshots"].([]any)
		Expect(snaps).To(HaveLen(1), "the forged week and the stray key are not served")
		Expect(snaps[0]).To(HaveKeyWithValue("week", "2026-W40"))
		Expect(snaps[0]).To(HaveKeyWithValue("checkpoint", string(real)))
		Expect(a.body["tlog_public_key"]).To(HavePrefix("-----BEGIN PUBLIC KEY-----"))

		one := do(s, http.MethodGet, "/federation/log/snapshots/2026-W40", nil)
		Expect(one.status).To(Equal(http.StatusOK))
		Expect(one.raw).To(Equal(real))
		Expect(one.header.Get("Content-Type")).To(HavePrefix("text/plain"))
		Expect(do(s, http.MethodGet, "/federation/log/snapshots/2026-W47", nil).body).To(HaveKeyWithValue("error", "snapshot_not_found"))
		Expect(do(s, http.MethodGet, "/federation/log/snapshots/2026-48", nil).body).To(HaveKeyWithValue("error", "invalid_week"))
	})

	It("answers an empty list before the first snapshot", func() {
		a := do(newServer(Options{}), http.MethodGet, "/federation/log/snapshots", nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body["snapshots"]).To(BeEmpty())
	})
})

// signatureLines returns the signature block of a signed note: everything after the text
// and its empty line.
func signatureLines(signed []byte) []byte {
	for i := 0; i+1 < len(signed); i++ {
		if signed[i] == '\n' && signed[i+1] == '\n' {
			return signed[i+2:]
		}
	}
	return nil
}
