package webhook

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// serverWith is an API server for f on the suite's manager with o's settings (its
// client, reader and Federation are f's).
func (f readFederation) serverWith(o Options) *Server {
	GinkgoHelper()
	o.Client, o.APIReader, o.Informers, o.Federation, o.RatePerSecond = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), f.key, -1
	if o.RegistrationLimit == 0 {
		o.RegistrationLimit = -1
	}
	s, err := New(o)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// submission reads the Submission of f a spec calls alias, as the controller left it.
func (f readFederation) submission(alias string) *fv1.Submission {
	GinkgoHelper()
	name, ok := submissionNames.Load(f.key.Namespace + "/" + alias)
	Expect(ok).To(BeTrue(), "no submission made as %s", alias)
	var sub fv1.Submission
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: f.key.Namespace, Name: name.(string)}, &sub)).To(Succeed())
	return &sub
}

// anchorOver creates the CrossAnchor id covering subs (one per operator), signed by key,
// and waits until the manager's cache holds it.
func (f readFederation) anchorOver(id string, key ed25519.PrivateKey, subs ...*fv1.Submission) *fv1.CrossAnchor {
	GinkgoHelper()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: id}}
	ca.Spec.AnchorID = fv1.AnchorID(id)
	ca.Spec.AnchoredAt = "20" + id[9:11] + "-" + id[11:13] + "-" + id[13:15] + "T07:00:00.000000" + id[16:19] + "Z"
	for _, sub := range subs {
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: sub.Spec.OperatorID,
			ChainSignature: sub.Spec.ChainSignature, LastSeq: sub.Spec.LastSeq})
	}
	sort.Slice(ca.Spec.Participants, func(i, j int) bool {
		return ca.Spec.Participants[i].OperatorID < ca.Spec.Participants[j].OperatorID
	})
	signAnchorSpec(ca, key)
	Expect(k8sClient.Create(ctx, ca)).To(Succeed())
	DeferCleanup(func() { _ = k8sClient.Delete(ctx, ca) })
	Eventually(func() error { return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &fv1.CrossAnchor{}) }).Should(Succeed())
	return ca
}

// logged waits until the controller logged ca and the cache shows it, and returns it.
func logged(ca *fv1.CrossAnchor) *fv1.CrossAnchor {
	GinkgoHelper()
	var got fv1.CrossAnchor
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ca), &got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(fv1.PhaseAnchored))
		g.Expect(got.Status.LogEntry).NotTo(BeNil())
	}).Should(Succeed())
	return &got
}

// doAuth sends a request to s with the Authorization header auth (none when empty).
func doAuth(s http.Handler, method, path, auth string, body []byte) answer {
	GinkgoHelper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body)).WithContext(ctx)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	a := answer{status: rec.Code, header: rec.Header(), raw: raw}
	if rec.Header().Get("Content-Type") == "application/json" {
		Expect(json.Unmarshal(raw, &a.body)).To(Succeed(), string(raw))
	}
	return a
}

// bearer is an operator bearer token of key binding body, dated now.
func bearer(key ed25519.PrivateKey, body []byte) string {
	GinkgoHelper()
	tok, err := protocol.SignToken(key, protocol.BodyNonce(time.Now(), body))
	Expect(err).NotTo(HaveOccurred())
	return "Bearer " + tok
}
