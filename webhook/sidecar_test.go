package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	cairnclient "github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

var _ = Describe("Attestation sidecars", func() {
	statement := testSidecar{"application/vnd.in-toto+json", "statement.intoto.json", []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)}
	card := testSidecar{"text/markdown; charset=utf-8", "model-card.md", []byte("# Model card\n\nbinary \x00\xff bytes kept\n")}

	// listed is the sidecars the operator summary lists for submission id.
	listed := func(s *Server, r registrant, id string) []any {
		GinkgoHelper()
		a := do(s, http.MethodGet, "/federation/operator/"+idOf(r), nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		for _, item := range a.body["submissions"].([]any) {
			if sub := item.(map[string]any); sub["submission_id"] == id {
				return sub["sidecars"].([]any)
			}
		}
		Fail("submission " + id + " is not in the summary")
		return nil
	}
	// served fetches a sidecar and checks it byte for byte with its headers.
	served := func(s *Server, sc testSidecar, wantType string) {
		GinkgoHelper()
		a := do(s, http.MethodGet, "/federation/sidecar/"+sidecar.Digest(sc.content), nil)
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.raw).To(Equal(sc.content))
		Expect(a.header.Get("Content-Type")).To(Equal(wantType))
		Expect(a.header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
		Expect(a.header.Get("Content-Disposition")).To(HavePrefix("attachment"))
		Expect(a.header.Get("Content-Security-Policy")).To(Equal("default-src 'none'; sandbox"))
	}

	It("takes two sidecars as multipart and as JSON, lists and serves both byte for byte, and stores each once", func() {
		dir := GinkgoT().TempDir()
		s := submitServer(Options{SidecarDir: dir})
		r := registered(s, "Sidecar Org")
		c := newChain(r.key, "sidecars", 20)

		body, ct := multipartSubmission(c.export(1, 10, exportTime()), statement, card)
		a := submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("submission_id", subName(r, 1)))
		Expect(a.body).NotTo(HaveKey("sidecars"), "the receipt does not change")

		var sub fv1.Submission
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: submitFed().key.Namespace, Name: subName(r, 1)}, &sub)).To(Succeed())
		Expect(sub.Spec.Sidecars).To(Equal([]fv1.SubmissionSidecar{
			{Digest: fv1.Hash(sidecar.Digest(statement.content)), MediaType: statement.mediaType, Size: int64(len(statement.content)), Name: statement.name},
			{Digest: fv1.Hash(sidecar.Digest(card.content)), MediaType: "text/markdown; charset=utf-8", Size: int64(len(card.content)), Name: card.name},
		}))
		Expect(listed(s, r, subName(r, 1))).To(Equal([]any{
			map[string]any{"sha256": sidecar.Digest(statement.content), "media_type": statement.mediaType, "size": float64(len(statement.content)), "name": statement.name,
				"url": "/federation/submission/" + subName(r, 1) + "/sidecar/" + sidecar.Digest(statement.content)},
			map[string]any{"sha256": sidecar.Digest(card.content), "media_type": card.mediaType, "size": float64(len(card.content)), "name": card.name,
				"url": "/federation/submission/" + subName(r, 1) + "/sidecar/" + sidecar.Digest(card.content)},
		}))
		served(s, statement, statement.mediaType)
		served(s, card, card.mediaType)

		By("the JSON form, carrying the same statement again and a new report")
		report := testSidecar{"", "eval.bin", bytes.Repeat([]byte{0xA5}, sidecar.MaxBytes)} // exactly the limit
		body = jsonSubmission(c.export(11, 20, exportTime()), statement, report)
		b := submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body))
		Expect(b.status).To(Equal(http.StatusOK), string(b.raw))
		Expect(b.body).To(HaveKeyWithValue("previous_submission_id", subName(r, 1)))
		items := listed(s, r, subName(r, 11))
		Expect(items).To(HaveLen(2))
		Expect(items[1]).To(HaveKeyWithValue("media_type", "application/octet-stream"))
		Expect(items[1]).To(HaveKeyWithValue("size", float64(sidecar.MaxBytes)))
		served(s, report, "application/octet-stream")

		By("storing the statement, carried twice, in one file, and nothing else")
		Expect(sidecarFiles(dir)).To(ConsistOf(
			filepath.Join(sidecar.Digest(statement.content)[:2], sidecar.Digest(statement.content)),
			filepath.Join(sidecar.Digest(card.content)[:2], sidecar.Digest(card.content)),
			filepath.Join(sidecar.Digest(report.content)[:2], sidecar.Digest(report.content))))
	})

	It("keeps the export-only JSON form, and lists no sidecars for it", func() {
		s := submitServer(Options{SidecarDir: GinkgoT().TempDir()})
		r := registered(s, "Plain Org")
		c := newChain(r.key, "plain", 5)
		a := submit(s, r.key, c.export(1, 5, exportTime()))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(listed(s, r, subName(r, 1))).To(BeEmpty())
	})

	It("refuses a ninth sidecar and one of 1 MiB + 1 byte, in both forms", func() {
		s := submitServer(Options{SidecarDir: GinkgoT().TempDir()})
		r := registered(s, "Limits Org")
		c := newChain(r.key, "limits", 5)
		export := c.export(1, 5, exportTime())
		nine := make([]testSidecar, 9)
		for i := range nine {
			nine[i] = testSidecar{"text/plain", "n.txt", []byte{byte('a' + i)}}
		}
		big := testSidecar{"application/octet-stream", "big.bin", bytes.Repeat([]byte{1}, sidecar.MaxBytes+1)}

		for _, form := range []string{"multipart", "json"} {
			send := func(scs ...testSidecar) answer {
				if form == "json" {
					body := jsonSubmission(export, scs...)
					return submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body))
				}
				body, ct := multipartSubmission(export, scs...)
				return submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
			}
			a := send(nine...)
			Expect(a.status).To(Equal(http.StatusBadRequest), form+": "+string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "too_many_sidecars"))
			Expect(a.body).To(HaveKeyWithValue("max_sidecars", 8.0))
			b := send(statement, big)
			Expect(b.status).To(Equal(http.StatusRequestEntityTooLarge), form+": "+string(b.raw))
			Expect(b.body).To(HaveKeyWithValue("error", "sidecar_too_large"))
			Expect(b.body).To(HaveKeyWithValue("max_bytes", float64(sidecar.MaxBytes)))
			bad := send(testSidecar{"text/", "x", []byte("x")})
			Expect(bad.status).To(Equal(http.StatusBadRequest), form+": "+string(bad.raw))
			Expect(bad.body).To(HaveKeyWithValue("error", "invalid_sidecar"))
		}
		Expect(submissionsOf(idOf(r))).To(BeEmpty())
	})

	It("binds the sidecars to the submission: none can be added by a later request", func() {
		dir := GinkgoT().TempDir()
		s := submitServer(Options{SidecarDir: dir})
		r := registered(s, "Bound Org")
		c := newChain(r.key, "bound", 5)
		export := c.export(1, 5, exportTime())
		body, ct := multipartSubmission(export, statement)
		token := bodyToken(r.key, body)
		Expect(submitBody(s, token, ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))

		By("the first request's token over a body that adds a sidecar")
		extra := testSidecar{"text/plain", "extra.txt", []byte("only ever sent by refused requests of " + idOf(r))}
		more, moreCT := multipartSubmission(export, statement, extra)
		a := submitBody(s, token, moreCT, bytes.NewReader(more))
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "invalid_token"))

		By("the operator's own valid token over the export with another sidecar set")
		b := submitBody(s, bodyToken(r.key, more), moreCT, bytes.NewReader(more))
		Expect(b.status).To(Equal(http.StatusConflict), string(b.raw))
		Expect(b.body).To(HaveKeyWithValue("error", "sidecars_immutable"))
		Expect(b.body).To(HaveKeyWithValue("submission_id", subName(r, 1)))
		plain := submit(s, r.key, export)
		Expect(plain.status).To(Equal(http.StatusConflict), string(plain.raw))

		By("a re-send with the same sidecars, in the JSON form, answering the same submission")
		same := jsonSubmission(export, statement)
		again := submitBody(s, bodyToken(r.key, same), "application/json", bytes.NewReader(same))
		Expect(again.status).To(Equal(http.StatusOK), string(again.raw))
		Expect(again.body).To(HaveKeyWithValue("submission_id", subName(r, 1)))

		subs := submissionsOf(idOf(r))
		Expect(subs).To(HaveLen(1))
		Expect(subs[0].Spec.Sidecars).To(HaveLen(1))
		Expect(do(s, http.MethodGet, "/federation/sidecar/"+sidecar.Digest(extra.content), nil).status).To(Equal(http.StatusNotFound),
			"the stored file of a refused request is not served")
		Expect(strings.Join(sidecarFiles(dir), " ")).NotTo(ContainSubstring(sidecar.Digest(extra.content)),
			"a sidecar is kept only once its submission is accepted: a refused one leaves nothing behind")
	})

	It("takes the Go client's multipart body, and the client fetches and checks each sidecar", func() {
		dir := GinkgoT().TempDir()
		s := submitServer(Options{SidecarDir: dir})
		r := registered(s, "Client Org")
		c := newChain(r.key, "client", 5)
		srv := httptest.NewServer(s)
		DeferCleanup(srv.Close)
		cl, err := cairnclient.New(srv.URL, cairnclient.WithOperator(idOf(r), r.key))
		Expect(err).NotTo(HaveOccurred())
		export := c.export(1, 5, exportTime())
		own := cairnclient.Sidecar{MediaType: "application/vnd.in-toto+json", Name: "../statement.json", Content: []byte("client statement of " + idOf(r))}
		res, err := cl.SubmitWithSidecars(ctx, bytes.NewReader(export), int64(len(export)), []cairnclient.Sidecar{own, {Name: "card.md", Content: card.content}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.SubmissionID).To(Equal(subName(r, 1)))
		sum, err := cl.Operator(ctx, idOf(r), cairnclient.PageOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Submissions).To(HaveLen(1))
		Expect(sum.Submissions[0].Sidecars).To(Equal([]cairnclient.SidecarRef{
			{SHA256: sidecar.Digest(own.Content), MediaType: own.MediaType, Size: int64(len(own.Content)), Name: "statement.json",
				URL: "/federation/submission/" + res.SubmissionID + "/sidecar/" + sidecar.Digest(own.Content)},
			{SHA256: sidecar.Digest(card.content), MediaType: "application/octet-stream", Size: int64(len(card.content)), Name: "card.md",
				URL: "/federation/submission/" + res.SubmissionID + "/sidecar/" + sidecar.Digest(card.content)},
		}))
		got, err := cl.Sidecar(ctx, sidecar.Digest(own.Content))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(own.Content))
	})

	It("reads the JSON form with the sidecars before the export", func() {
		s := submitServer(Options{SidecarDir: GinkgoT().TempDir()})
		r := registered(s, "Order Org")
		c := newChain(r.key, "order", 5)
		body := []byte(" {\n \"sidecars\" : [{\"media_type\": \"text/plain\", \"name\": \"n.txt\", \"content_b64\": \"aGk=\"}] ,\n \"export\" :\n" +
			string(c.export(1, 5, exportTime())) + " }\n")
		a := submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		Expect(listed(s, r, subName(r, 1))).To(ConsistOf(HaveKeyWithValue("sha256", sidecar.Digest([]byte("hi")))))
	})

	It("has the API server refuse a ninth sidecar or a malformed digest written directly", func() {
		spec := submissionsOf(idOf(registered(submitServer(Options{}), "CEL Org")))
		Expect(spec).To(BeEmpty())
		sc := fv1.SubmissionSidecar{Digest: fv1.Hash(strings.Repeat("a", 64)), MediaType: "text/plain", Size: 1}
		for name, scs := range map[string][]fv1.SubmissionSidecar{
			"nine":   {sc, sc, sc, sc, sc, sc, sc, sc, sc},
			"digest": {{Digest: "../../etc/passwd", MediaType: "text/plain", Size: 1}},
			"size":   {{Digest: sc.Digest, MediaType: "text/plain", Size: 1<<20 + 1}},
		} {
			sub := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: submitFed().key.Namespace, Name: "cel-" + name},
				Spec: fv1.SubmissionSpec{OperatorID: "op_0000000000000000", ChainSignature: fv1.Hash(strings.Repeat("1", 64)),
					EntryCount: 1, FirstSeq: 1, LastSeq: 1, FirstPrevHash: fv1.Hash(strings.Repeat("0", 64)),
					LastHMACHash: fv1.Hash(strings.Repeat("2", 64)), ExportedAt: "2026-11-24T07:00:00Z", SignedHeader: "{}",
					Signature: fv1.Signature(strings.Repeat("A", 86) + "=="), PublicKeyPEM: "x", Sidecars: scs}}
			err := k8sClient.Create(ctx, sub)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", name, err)
			Expect(err.Error()).To(ContainSubstring("spec.sidecars"), name)
		}
	})

	It("answers 503 to sidecars when the federation has no sidecar directory", func() {
		s := submitServer(Options{})
		r := registered(s, "No Dir Org")
		c := newChain(r.key, "nodir", 5)
		body := jsonSubmission(c.export(1, 5, exportTime()), statement)
		a := submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "sidecars_not_configured"))
	})
})
