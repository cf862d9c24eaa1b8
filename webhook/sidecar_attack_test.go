package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
			a := do(s, http.MethodGet, "/federation/sidecar/"+sidecar.Digest(sc.content), nil)
			Expect(a.status).To(Equal(http.StatusOK))
			Expect(a.raw).To(Equal(sc.content))
			Expect(a.header.Get("Content-Type")).To(Equal("application/octet-stream"), sc.name)
			Expect(a.header.Get("Content-Disposition")).To(HavePrefix("attachment"))
			Expect(a.header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
			Expect(a.header.Get("Content-Security-Policy")).To(ContainSubstring("sandbox"))
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
