package api

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkListEntries serves GET /api/chain?limit=50 through the real handler (routing,
// the API key check, the store, JSON) over a 10,000-entry chain, from every core, and
// reports requests per second. Target: at least 5,000 req/s on 2 cores.
func BenchmarkListEntries(b *testing.B) {
	srv := benchServer(b, 10_000)
	// Pages spread over the chain, as a client paging through it would ask for them.
	b.ReportAllocs()
	cpuBefore := cpuTime(b)
	b.ResetTimer()
	var answered atomic.Int64 // bytes of the answers
	b.RunParallel(func(pb *testing.PB) {
		offsets := []string{"0", "2500", "5000", "7450", "9950"}
		w := &discardWriter{header: http.Header{}}
		i := 0
		defer func() { answered.Add(int64(w.total)) }()
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/api/chain?limit=50&offset="+offsets[i%len(offsets)], nil)
			req.Header.Set("Authorization", "Bearer "+testAPIKey)
			clear(w.header)
			w.status, w.bytes = 0, 0
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK || w.bytes < 50*400 {
				b.Fatalf("status %d, %d bytes", w.status, w.bytes)
			}
			w.total += w.bytes
			i++
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(answered.Load())/float64(b.N), "bytes/answer")
	// The machine may be shared: the process's CPU time per request says what the
	// handler costs whatever else runs, and how many requests two idle cores would serve.
	perReq := (cpuTime(b) - cpuBefore).Seconds() / float64(b.N)
	b.ReportMetric(perReq*1e6, "cpu-µs/req")
	b.ReportMetric(2/perReq, "req/s@2cores")
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discardWriter is a ResponseWriter that keeps the status and counts the body, as a
// network connection would take it, without growing a buffer per request.
type discardWriter struct {
	header http.Header
	status int
	bytes  int
	total  int // bytes over every answer, for the caller to keep
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.bytes += len(p)
	return len(p), nil
}
