package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

var _ = Describe("Attestation sidecars under attack", func() {
	var (
		s   *Server
		dir string
		r   registrant
		c   *chain
	)
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		s = submitServer(Options{SidecarDir: dir})
		r = registered(s, "Sidecar Attacker "+GinkgoT().Name())
		c = newChain(r.key, "attack", 20)
	})

	It("never uses a client's name as a path", func() {
		evil := []testSidecar{
			{"text/plain", "../../../../etc/passwd", []byte("traversal 1 " + idOf(r))},
			{"text/plain", `..\..\windows\win.ini`, []byte("traversal 2 " + idOf(r))},
			{"text/plain", "\x1b[31mred\x00\"quoted\".txt", []byte("traversal 3 " + idOf(r))},
		}
		body := jsonSubmission(c.export(1, 10, exportTime()), evil...)
		a := submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		subs := submissionsOf(idOf(r))
		Expect(subs).To(HaveLen(1))
		var names []string
		for _, sc := range subs[0].Spec.Sidecars {
			names = append(names, sc.Name)
		}
		Expect(names).To(Equal([]string{"passwd", "win.ini", "_[31mred__quoted_.txt"}))
		for _, f := range sidecarFiles(dir) {
			Expect(sidecar.ValidDigest(filepath.Base(f))).To(BeTrue(), f)
		}
		served := do(s, http.MethodGet, "/federation/sidecar/"+sidecar.Digest(evil[2].content), nil)
		Expect(served.status).To(Equal(http.StatusOK))
		Expect(served.header.Get("Content-Disposition")).To(Equal(`attachment; filename="_[31mred__quoted_.txt"`))
	})

	It("answers 400 to a malformed digest and 404 to an unknown one, whatever the path holds", func() {
		for _, p := range []string{"..%2F..%2Fetc%2Fpasswd", "..%2f" + strings.Repeat("a", 61), strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("a", 65), "%00"} {
			a := do(s, http.MethodGet, "/federation/sidecar/"+p, nil)
			Expect(a.status).To(Equal(http.StatusBadRequest), p+": "+string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_digest"))
		}
		a := do(s, http.MethodGet, "/federation/sidecar/../../etc/passwd", nil)
		Expect(a.status).NotTo(Equal(http.StatusOK))
		Expect(string(a.raw)).NotTo(ContainSubstring("root:"))
		unknown := do(s, http.MethodGet, "/federation/sidecar/"+strings.Repeat("0", 64), nil)
		Expect(unknown.status).To(Equal(http.StatusNotFound), string(unknown.raw))
		Expect(unknown.body).To(HaveKeyWithValue("error", "sidecar_not_found"))
	})

	It("serves HTML and SVG as bytes to download, never as a document", func() {
		html := testSidecar{"text/html; charset=utf-8", "report.html", []byte("<script>alert(1)</script> " + idOf(r))}
		svg := testSidecar{"image/svg+xml", "chart.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>` + idOf(r))}
		body, ct := multipartSubmission(c.export(1, 10, exportTime()), html, svg)
		Expect(submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		for _, sc := range []testSidecar{html, svg} {
			d := sidecar.Digest(sc.content)
			for _, path := range []string{"/federation/sidecar/" + d, "/federation/submission/" + subName(r, 1) + "/sidecar/" + d} {
				a := do(s, http.MethodGet, path, nil)
				Expect(a.status).To(Equal(http.StatusOK), path)
				Expect(a.raw).To(Equal(sc.content))
				Expect(a.header.Get("Content-Type")).To(Equal("application/octet-stream"), path)
				Expect(a.header.Get("Content-Disposition")).To(HavePrefix("attachment"))
				Expect(a.header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
				Expect(a.header.Get("Content-Security-Policy")).To(ContainSubstring("sandbox"))
			}
		}
		By("the summary still names the type the operator gave")
		sum := do(s, http.MethodGet, "/federation/operator/"+idOf(r), nil)
		Expect(string(sum.raw)).To(ContainSubstring(`"media_type":"text/html; charset=utf-8"`))
	})

	It("refuses a multipart body of many parts or huge headers early, without reading the rest", func() {
		export := c.export(1, 10, exportTime())
		tail := strings.Repeat("x", 32<<20) // what a client would make the server hash

		By("many tiny parts")
		var many bytes.Buffer
		many.WriteString("--b\r\nContent-Disposition: form-data; name=\"export\"\r\n\r\n")
		many.Write(export)
		for i := range 10000 {
			fmt.Fprintf(&many, "\r\n--b\r\nContent-Disposition: form-data; name=\"sidecar\"; filename=\"%d\"\r\n\r\nx", i)
		}
		many.WriteString(tail)
		src := &countingReader{r: bytes.NewReader(many.Bytes())}
		a := submitBody(s, bodyToken(r.key, many.Bytes()), "multipart/form-data; boundary=b", src)
		Expect(a.status).To(Equal(http.StatusBadRequest), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "too_many_sidecars"))
		Expect(src.n).To(BeNumerically("<", len(export)+64<<10), "read before the answer")

		By("one part's header of 1 MiB")
		var huge bytes.Buffer
		huge.WriteString("--b\r\nContent-Disposition: form-data; name=\"sidecar\"; filename=\"h\"\r\nX-Pad: ")
		huge.WriteString(strings.Repeat("h", 1<<20))
		huge.WriteString("\r\n\r\nx\r\n--b--\r\n")
		huge.WriteString(tail)
		src = &countingReader{r: bytes.NewReader(huge.Bytes())}
		b := submitBody(s, bodyToken(r.key, huge.Bytes()), "multipart/form-data; boundary=b", src)
		Expect(b.status).To(Equal(http.StatusRequestEntityTooLarge), string(b.raw))
		Expect(b.body).To(HaveKeyWithValue("error", "multipart_framing_too_large"))
		Expect(src.n).To(BeNumerically("<", 128<<10))

		By("a 1 MiB + 1 byte sidecar before a long tail")
		body, ct := multipartSubmission(export, testSidecar{"text/plain", "big", bytes.Repeat([]byte{'b'}, sidecar.MaxBytes+1)})
		body = append(body, tail...)
		src = &countingReader{r: bytes.NewReader(body)}
		big := submitBody(s, bodyToken(r.key, body), ct, src)
		Expect(big.status).To(Equal(http.StatusRequestEntityTooLarge), string(big.raw))
		Expect(src.n).To(BeNumerically("<", len(export)+sidecar.MaxBytes+128<<10))
		Expect(submissionsOf(idOf(r))).To(BeEmpty())
	})

	It("refuses a token over a different body: the export alone, or another sidecar", func() {
		export := c.export(1, 10, exportTime())
		body, ct := multipartSubmission(export, testSidecar{"text/plain", "a.txt", []byte("a")})
		for _, signed := range [][]byte{export, jsonSubmission(export, testSidecar{"text/plain", "a.txt", []byte("a")})} {
			a := submitBody(s, bodyToken(r.key, signed), ct, bytes.NewReader(body))
			Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "invalid_token"))
		}
		swapped := jsonSubmission(export, testSidecar{"text/plain", "a.txt", []byte("b")})
		a := submitBody(s, bodyToken(r.key, jsonSubmission(export, testSidecar{"text/plain", "a.txt", []byte("a")})), "application/json", bytes.NewReader(swapped))
		Expect(a.status).To(Equal(http.StatusUnauthorized), string(a.raw))
		Expect(submissionsOf(idOf(r))).To(BeEmpty())
		Expect(sidecarFiles(dir)).To(BeEmpty(), "nothing is stored before the token is checked")
	})

	It("refuses a stored file that no longer matches its digest", func() {
		sc := testSidecar{"text/plain", "t.txt", []byte("tamper me " + idOf(r))}
		body := jsonSubmission(c.export(1, 10, exportTime()), sc)
		Expect(submitBody(s, bodyToken(r.key, body), "application/json", bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		d := sidecar.Digest(sc.content)
		Expect(os.WriteFile(filepath.Join(dir, d[:2], d), []byte("tampered"), 0o600)).To(Succeed())
		a := do(s, http.MethodGet, "/federation/sidecar/"+d, nil)
		Expect(a.status).To(Equal(http.StatusInternalServerError), string(a.raw))
		Expect(string(a.raw)).NotTo(ContainSubstring("tampered"))
	})

	It("serves a sidecar under the submission that named it, with that submission's label", func() {
		content := []byte("%PDF-1.7 the evaluation report of " + idOf(r))
		original := testSidecar{"application/pdf", "report.pdf", content}
		notes := testSidecar{"text/plain", "notes.txt", []byte("notes of " + idOf(r))}
		body, ct := multipartSubmission(c.export(1, 10, exportTime()), original, notes)
		Expect(submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		subA := submissionsOf(idOf(r))
		Expect(subA).To(HaveLen(1))
		// The relabel is created a second later, so that creation times, not names, order them.
		time.Sleep(time.Until(subA[0].CreationTimestamp.Add(time.Second + 10*time.Millisecond)))

		By("another operator sending the same bytes under its own name and media type")
		m := registered(s, "Sidecar Relabeler "+GinkgoT().Name())
		relabel := testSidecar{"text/plain", "evil.html", content}
		body = jsonSubmission(newChain(m.key, "relabel", 10).export(1, 10, exportTime()), relabel)
		Expect(submitBody(s, bodyToken(m.key, body), "application/json", bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		d := sidecar.Digest(content)
		label := func(a answer) string {
			GinkgoHelper()
			Expect(a.status).To(Equal(http.StatusOK), "%s", a.raw)
			Expect(a.raw).To(Equal(content))
			Expect(a.header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
			Expect(a.header.Get("Content-Security-Policy")).To(Equal(sidecarCSP))
			return a.header.Get("Content-Type") + " " + a.header.Get("Content-Disposition")
		}
		labelA, labelB := "application/pdf attachment; filename=report.pdf", "text/plain attachment; filename=evil.html"
		for range 20 {
			Expect(label(do(s, http.MethodGet, "/federation/sidecar/"+d, nil))).To(Equal(labelA), "the old URL answers the oldest submission's label")
		}

		By("each submission's URL answering its own label, immutably")
		for id, want := range map[string]string{subName(r, 1): labelA, subName(m, 1): labelB} {
			a := do(s, http.MethodGet, "/federation/submission/"+id+"/sidecar/"+d, nil)
			Expect(label(a)).To(Equal(want), id)
			Expect(a.header.Get("Cache-Control")).To(ContainSubstring("immutable"))
		}
		sum := do(s, http.MethodGet, "/federation/operator/"+idOf(m), nil)
		Expect(string(sum.raw)).To(ContainSubstring(`"url":"/federation/submission/` + subName(m, 1) + `/sidecar/` + d + `"`))

		By("a submission that does not name the digest, an unknown one, and one not accepted")
		pending := &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: submitFed().key.Namespace, Name: "relabel-pending-" + d[:8]},
			Spec: subA[0].Spec}
		pending.Spec.OperatorID = "op_0000000000000000"
		pending.Spec.Sidecars = []fv1.SubmissionSidecar{{Digest: fv1.Hash(d), MediaType: "text/plain", Size: int64(len(content)), Name: "pending.html"}}
		Expect(k8sClient.Create(ctx, pending)).To(Succeed())
		DeferCleanup(func() { _ = k8sClient.Delete(ctx, pending) })
		Eventually(func(g Gomega) {
			var seen fv1.Submission
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(pending), &seen)).To(Succeed())
			g.Expect(seen.Status.Conditions).NotTo(BeEmpty(), "the controller has looked at it")
		}).Should(Succeed())
		for _, path := range []string{
			"/federation/submission/" + subName(m, 1) + "/sidecar/" + sidecar.Digest(notes.content),
			"/federation/submission/" + subName(r, 2) + "/sidecar/" + d,
			"/federation/submission/" + pending.Name + "/sidecar/" + d,
			"/federation/submission/..%2F" + subName(r, 1) + "/sidecar/" + d,
		} {
			a := do(s, http.MethodGet, path, nil)
			Expect(a.status).To(Equal(http.StatusNotFound), "%s: %s", path, a.raw)
			Expect(a.body).To(HaveKeyWithValue("error", "sidecar_not_found"))
		}
		bad := do(s, http.MethodGet, "/federation/submission/"+subName(r, 1)+"/sidecar/"+strings.ToUpper(d), nil)
		Expect(bad.status).To(Equal(http.StatusBadRequest), string(bad.raw))
		old := do(s, http.MethodGet, "/federation/sidecar/"+d, nil)
		Expect(label(old)).To(Equal(labelA))
		Expect(old.header.Get("Cache-Control")).NotTo(ContainSubstring("immutable"), "an older submission accepted later takes the label")
	})

	It("refuses a JSON form with an unknown member, a second export, or trailing data", func() {
		export := c.export(1, 10, exportTime())
		for _, body := range []string{
			`{"export":` + string(export) + `,"extra":1}`,
			`{"export":` + string(export) + `,"export":` + string(export) + `}`,
			`{"export":` + string(export) + `} {}`,
			`{"sidecars":[]}`,
			`{"export": 5}`,
		} {
			a := submitBody(s, bodyToken(r.key, []byte(body)), "application/json", io.NopCloser(strings.NewReader(body)))
			Expect(a.status).To(Equal(http.StatusBadRequest), body[:min(len(body), 40)]+": "+string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "malformed_json"))
		}
	})
})
