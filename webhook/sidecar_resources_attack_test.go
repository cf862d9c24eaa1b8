package webhook

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// stallingSubmission is a multipart submission whose sidecars come first and whose export
// part never ends: the server has read every sidecar when sent is closed, unless it
// answered first (answer).
type stallingSubmission struct {
	sent   chan struct{}
	answer chan answer
	pw     *io.PipeWriter
	pr     *io.PipeReader
	got    *answer // the answer, once read
}

// stallSubmission starts a submission of r's export c with sidecars sidecars first, which
// stalls after the export part's headers until cut is called.
func stallSubmission(s http.Handler, r registrant, export []byte, sidecars ...testSidecar) *stallingSubmission {
	GinkgoHelper()
	body, prefix, contentType, err := sidecarsFirst(export, sidecars...)
	Expect(err).NotTo(HaveOccurred())
	st := &stallingSubmission{sent: make(chan struct{}), answer: make(chan answer, 1)}
	st.pr, st.pw = io.Pipe()
	req := httptest.NewRequest(http.MethodPost, "/federation/submit", st.pr).WithContext(ctx)
	req.Header.Set("Authorization", bodyToken(r.key, body))
	req.Header.Set("Content-Type", contentType)
	go func() {
		defer GinkgoRecover()
		st.answer <- record(s, req)
		_ = st.pr.CloseWithError(errors.New("answered"))
	}()
	go func() {
		if _, err := st.pw.Write(body[:prefix+10]); err == nil { // 10 bytes of the export, then nothing
			close(st.sent)
		}
	}()
	return st
}

// settle waits until the server has read every sidecar of st, or answered it.
func (st *stallingSubmission) settle() (answer, bool) {
	GinkgoHelper()
	select {
	case <-st.sent:
		return answer{}, false
	case a := <-st.answer:
		st.got = &a
		return a, true
	case <-time.After(time.Minute):
		Fail("the server neither read the sidecars nor answered")
		return answer{}, false
	}
}

// cut ends st's body mid-export, as a client that goes away, and waits for the answer.
func (st *stallingSubmission) cut() {
	GinkgoHelper()
	_ = st.pw.CloseWithError(errors.New("client went away"))
	if st.got != nil {
		return
	}
	select {
	case a := <-st.answer:
		st.got = &a
	case <-time.After(time.Minute):
		Fail("the server did not answer a body cut short")
	}
}

// sidecarsFirst is a multipart submission of export whose sidecars come before the
// export part, its Content-Type, and where the export's content starts.
func sidecarsFirst(export []byte, sidecars ...testSidecar) (body []byte, exportAt int, contentType string, err error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, sc := range sidecars {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="sidecar"; filename="`+sc.name+`"`)
		h.Set("Content-Type", sc.mediaType)
		part, err := mw.CreatePart(h)
		if err != nil {
			return nil, 0, "", err
		}
		_, _ = part.Write(sc.content)
	}
	part, err := mw.CreateFormFile("export", "export.json")
	if err != nil {
		return nil, 0, "", err
	}
	exportAt = buf.Len()
	_, _ = part.Write(export)
	if err := mw.Close(); err != nil {
		return nil, 0, "", err
	}
	return buf.Bytes(), exportAt, mw.FormDataContentType(), nil
}

// randomSidecars are n sidecars of size random bytes each.
func randomSidecars(n, size int) []testSidecar {
	out := make([]testSidecar, n)
	for i := range out {
		content := make([]byte, size)
		_, _ = rand.Read(content)
		out[i] = testSidecar{"application/octet-stream", fmt.Sprintf("blob-%d.bin", i), content}
	}
	return out
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// incomingFiles lists the sidecar store's files being received.
func incomingFiles(dir string) []string {
	GinkgoHelper()
	entries, err := os.ReadDir(filepath.Join(dir, ".incoming"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var _ = Describe("Sidecars under a resource attack", func() {
	var (
		s   *Server
		dir string
	)
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		s = submitServer(Options{SidecarDir: dir})
	})

	It("holds 30 stalled submissions' sidecars on disk within the replica's budget, not in memory", func() {
		const n = 30
		before := heapInUse()
		stalls := make([]*stallingSubmission, n)
		for i := range stalls {
			r := registered(s, fmt.Sprintf("Stalling Sidecars %d %s", i, GinkgoT().Name()))
			stalls[i] = stallSubmission(s, r, newChain(r.key, "stall", 3).export(1, 3, exportTime()), randomSidecars(8, 1<<20)...)
		}
		var held, refused int
		for _, st := range stalls {
			a, answered := st.settle()
			if !answered {
				held++
				continue
			}
			refused++
			Expect(a.status).To(Equal(http.StatusServiceUnavailable), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "server_busy"))
			Expect(a.header.Get("Retry-After")).NotTo(BeEmpty())
		}
		grown := int64(heapInUse()) - int64(before)
		GinkgoWriter.Printf("%d submissions hold their sidecars, %d refused; heap grew %d KiB\n", held, refused, grown>>10)
		Expect(grown).To(BeNumerically("<", 32<<20), "the stalled submissions' sidecars are held in memory")
		Expect(held*8<<20).To(BeNumerically("<=", 64<<20), "the replica holds more sidecar bytes than its budget")
		Expect(refused).To(BeNumerically(">", 0))
		for _, st := range stalls {
			st.cut()
		}
		Expect(incomingFiles(dir)).To(BeEmpty(), "a submission cut short left its sidecars behind")
		Expect(sidecarFiles(dir)).To(BeEmpty())
	})

	It("lets one operator hold at most its own share: submissions and sidecar bytes in flight", func() {
		r := registered(s, "Greedy Sidecars "+GinkgoT().Name())
		c := newChain(r.key, "greedy", 10)
		var stalls []*stallingSubmission
		// Two submissions of 8 MiB of sidecars each are the operator's whole byte budget.
		for i := range 2 {
			st := stallSubmission(s, r, c.export(1, int64(3+i), exportTime()), randomSidecars(8, 1<<20)...)
			_, answered := st.settle()
			Expect(answered).To(BeFalse())
			stalls = append(stalls, st)
		}
		third := stallSubmission(s, r, c.export(1, 6, exportTime()), randomSidecars(8, 1<<20)...)
		a, answered := third.settle()
		Expect(answered).To(BeTrue(), "a third submission's sidecars were read past the operator's budget")
		Expect(a.status).To(Equal(http.StatusTooManyRequests), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "sidecar_budget_exceeded"))
		Expect(a.header.Get("Retry-After")).NotTo(BeEmpty())

		// Without sidecars, the operator's submissions in flight are bounded too.
		for i := range 2 {
			st := stallSubmission(s, r, c.export(1, int64(7+i), exportTime()))
			_, answered := st.settle()
			Expect(answered).To(BeFalse())
			stalls = append(stalls, st)
		}
		fifth := stallSubmission(s, r, c.export(1, 9, exportTime()))
		a, answered = fifth.settle()
		Expect(answered).To(BeTrue(), "a fifth submission in flight was read")
		Expect(a.status).To(Equal(http.StatusTooManyRequests), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "too_many_submissions_in_flight"))

		// Another operator is not held back by this one.
		other := registered(s, "Patient Sidecars "+GinkgoT().Name())
		oc := newChain(other.key, "patient", 5)
		body, ct := multipartSubmission(oc.export(1, 5, exportTime()), randomSidecars(2, 1<<20)...)
		Expect(submitBody(s, bodyToken(other.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))

		for _, st := range stalls {
			st.cut()
		}
		Expect(incomingFiles(dir)).To(BeEmpty())
		// Once they are answered, the operator's budget is whole again.
		body, ct = multipartSubmission(c.export(1, 10, exportTime()), randomSidecars(8, 1<<20)...)
		a = submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	})

	It("writes nothing that stays for ten re-sends refused as sidecars_immutable", func() {
		r := registered(s, "Re-sending Sidecars "+GinkgoT().Name())
		export := newChain(r.key, "resend", 10).export(1, 10, exportTime())
		body, ct := multipartSubmission(export, testSidecar{"text/plain", "card.txt", []byte("the original card " + idOf(r))})
		Expect(submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		kept := sidecarFiles(dir)
		Expect(kept).To(HaveLen(1))
		for range 10 {
			body, ct := multipartSubmission(export, randomSidecars(8, 1<<20)...)
			a := submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
			Expect(a.status).To(Equal(http.StatusConflict), string(a.raw))
			Expect(a.body).To(HaveKeyWithValue("error", "sidecars_immutable"))
		}
		Expect(sidecarFiles(dir)).To(Equal(kept), "refused re-sends left files on the volume")
	})

	It("writes nothing that stays for a submission the controller refuses", func() {
		r := registered(s, "Refused Sidecars "+GinkgoT().Name())
		c := newChain(r.key, "refused", 10)
		Expect(submit(s, r.key, c.export(1, 5, exportTime())).status).To(Equal(http.StatusOK))
		body, ct := multipartSubmission(c.export(7, 10, exportTime()), randomSidecars(2, 4096)...) // skips seq 6
		a := submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusUnprocessableEntity), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "continuity_violation"))
		Expect(sidecarFiles(dir)).To(BeEmpty(), "a refused submission left files on the volume")
	})

	It("refuses sidecars past the operator's quota, and what is already named costs nothing", func() {
		s = submitServer(Options{SidecarDir: dir, OperatorSidecarQuotaBytes: 3 << 20})
		r := registered(s, "Hoarding Sidecars "+GinkgoT().Name())
		c := newChain(r.key, "hoard", 9)
		two := randomSidecars(2, 1<<20)
		body, ct := multipartSubmission(c.export(1, 3, exportTime()), two...)
		Expect(submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		body, ct = multipartSubmission(c.export(4, 6, exportTime()), append(two, randomSidecars(1, 1<<20)...)...)
		a := submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
		kept := sidecarFiles(dir)
		body, ct = multipartSubmission(c.export(7, 9, exportTime()), randomSidecars(1, 1024)...)
		a = submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body))
		Expect(a.status).To(Equal(http.StatusRequestEntityTooLarge), string(a.raw))
		Expect(a.body).To(HaveKeyWithValue("error", "sidecar_quota_exceeded"))
		Expect(a.body).To(HaveKeyWithValue("used_bytes", BeNumerically("==", 3<<20)))
		Expect(sidecarFiles(dir)).To(Equal(kept))
		// The export alone is still taken.
		Expect(submit(s, r.key, c.export(7, 9, exportTime())).status).To(Equal(http.StatusOK))
	})

	It("sweeps what a crash left and what no submission names, once no request can still use it", func() {
		r := registered(s, "Swept Sidecars "+GinkgoT().Name())
		named := testSidecar{"text/plain", "named.txt", []byte("named by an accepted submission " + idOf(r))}
		body, ct := multipartSubmission(newChain(r.key, "sweep", 3).export(1, 3, exportTime()), named)
		Expect(submitBody(s, bodyToken(r.key, body), ct, bytes.NewReader(body)).status).To(Equal(http.StatusOK))
		unnamed, err := sidecar.NewStore(dir).Put([]byte("named by nothing " + idOf(r)))
		Expect(err).NotTo(HaveOccurred())
		fresh, err := sidecar.NewStore(dir).Put([]byte("named by nothing yet " + idOf(r)))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(filepath.Join(dir, ".incoming"), 0o750)).To(Succeed())
		crashed := filepath.Join(dir, ".incoming", "in-crashed")
		Expect(os.WriteFile(crashed, []byte("half a sidecar"), 0o600)).To(Succeed())
		old := time.Now().Add(-DefaultWriteTimeout - 2*time.Minute)
		for _, p := range []string{crashed, filepath.Join(dir, unnamed[:2], unnamed), filepath.Join(dir, sidecar.Digest(named.content)[:2], sidecar.Digest(named.content))} {
			Expect(os.Chtimes(p, old, old)).To(Succeed())
		}
		Eventually(func() []fv1.Submission { return cachedSidecarSubmissions(s, sidecar.Digest(named.content)) }).ShouldNot(BeEmpty())
		s.sweepSidecars(ctx)
		Expect(sidecarFiles(dir)).To(ConsistOf(
			filepath.Join(sidecar.Digest(named.content)[:2], sidecar.Digest(named.content)),
			filepath.Join(fresh[:2], fresh)))
		Expect(s.sidecarsStored.Load()).To(Equal(int64(len(named.content) + len("named by nothing yet "+idOf(r)))))
	})
})

// cachedSidecarSubmissions are the Submissions of s's federation the cache shows naming
// digest.
func cachedSidecarSubmissions(s *Server, digest string) []fv1.Submission {
	var subs fv1.SubmissionList
	Expect(s.client.List(ctx, &subs, client.InNamespace(s.federation.Namespace),
		client.MatchingFields{federation.SidecarIndex: digest})).To(Succeed())
	return subs.Items
}
