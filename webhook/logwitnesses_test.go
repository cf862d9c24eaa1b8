package webhook

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/internal/witnessd/witnesstest"
	"github.com/cairn-dev/cairn/pkg/witness"
)

var _ = Describe("The log's witnesses", func() {
	It("are served with the checkpoint's cosignatures, shown on the public page, and too few are said so", func() {
		f := newTestFederation("cairn-witnessed-", 10000)
		s, err := New(Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: f.key,
			RatePerSecond: -1, RegistrationLimit: -1, LogDir: logDir})
		Expect(err).NotTo(HaveOccurred())

		By("before any policy, the log's verifier key is served for members to configure their witnesses with")
		var a answer
		Eventually(func() int { a = do(s, http.MethodGet, "/federation/log/witnesses", nil); return a.status }).Should(Equal(http.StatusOK))
		vkey := a.body["log_verifier_key"].(string)
		lk, err := witness.ParseLogKey(vkey)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.body).To(HaveKeyWithValue("policy", ""))
		Expect(a.body["witnesses"]).To(BeEmpty())

		By("three witnesses, two required")
		dir := GinkgoT().TempDir()
		var ws []*witnesstest.Witness
		policy := &fv1.WitnessPolicy{Quorum: 2}
		for i := range 3 {
			w, err := witnesstest.Start(fmt.Sprintf("w%d.member.example", i), lk.String(), dir)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(w.Stop)
			ws = append(ws, w)
			policy.Witnesses = append(policy.Witnesses, fv1.WitnessRef{Name: fmt.Sprintf("member-%d", i), Key: w.VerifierKey, URL: w.URL})
		}
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var fed fv1.Federation
			Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
			fed.Spec.TransparencyLog.Witnesses = policy
			return k8sClient.Update(ctx, &fed)
		})).To(Succeed())
		Eventually(func(g Gomega) {
			a = do(s, http.MethodGet, "/federation/log/witnesses", nil)
			g.Expect(a.body).To(HaveKeyWithValue("satisfied", true), string(a.raw))
		}).Should(Succeed())
		Expect(a.body["quorum"]).To(Equal("2 of (w0.member.example, w1.member.example, w2.member.example)"))
		p, err := witness.ParsePolicy([]byte(a.body["policy"].(string)))
		Expect(err).NotTo(HaveOccurred(), "the served policy is one verifiers read")
		v, err := p.Check([]byte(a.body["checkpoint"].(string)))
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Satisfied).To(BeTrue())
		Expect(a.body["witnesses"]).To(ContainElement(And(HaveKeyWithValue("name", "member-0"), HaveKeyWithValue("cosigned", true))))

		By("GET /federation/log/checkpoint carries the cosignatures after the log's signature")
		cp := do(s, http.MethodGet, "/federation/log/checkpoint", nil)
		Expect(cp.status).To(Equal(http.StatusOK))
		Expect(string(cp.raw)).To(ContainSubstring("\u2014 w0.member.example "))
		page := do(s, http.MethodGet, "/", nil)
		Expect(string(page.raw)).To(ContainSubstring("Witnessed: cosigned by"))

		By("a cosignature line that does not verify is not served: the checkpoint goes out with the log's signature alone")
		cosignedPath := filepath.Join(logDir, f.key.Namespace, f.key.Name, tlog.CosignedCheckpointFile)
		good, err := os.ReadFile(cosignedPath)
		Expect(err).NotTo(HaveOccurred())
		forged := strings.Replace(string(good), "\u2014 w1.member.example ", "\u2014 w1.member.example A", 1)
		forged = forged[:len(forged)-2] + "=\n"
		Expect(os.WriteFile(cosignedPath, []byte(forged), 0o644)).To(Succeed())
		cp = do(s, http.MethodGet, "/federation/log/checkpoint", nil)
		Expect(string(cp.raw)).NotTo(ContainSubstring("\u2014 w1.member.example"))
		Expect(os.WriteFile(cosignedPath, good, 0o644)).To(Succeed())

		By("with two witnesses down, a new checkpoint has too few cosignatures, and the page says so")
		ws[1].Stop()
		ws[2].Stop()
		f.register(s, newRegistrant("Witnessed Org"))
		Eventually(func(g Gomega) {
			page = do(s, http.MethodGet, "/", nil)
			g.Expect(string(page.raw)).To(ContainSubstring("Too few cosignatures"))
		}).Should(Succeed())
		a = do(s, http.MethodGet, "/federation/log/witnesses", nil)
		Expect(a.body).To(HaveKeyWithValue("satisfied", false))
		var fed fv1.Federation
		Expect(k8sClient.Get(ctx, f.key, &fed)).To(Succeed())
		Expect(federation.WitnessPolicyText(&fed)).To(Equal(a.body["policy"]))
	})
})
