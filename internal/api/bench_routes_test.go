package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// benchServer is a server over a chain of n testBody entries (so n energy_log rows) with
// one saved regression run.
func benchServer(b *testing.B, n int) *Server {
	b.Helper()
	path := filepath.Join(b.TempDir(), "chain.db")
	s, err := store.Open(path, testSecret)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	bodies := make([]protocol.SpanBody, n)
	for i := range bodies {
		bodies[i] = testBody(int64(i) + 1)
	}
	if _, err := s.Seal(b.Context(), bodies); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Store: s, DBPath: path, Secret: testSecret, APIKey: testAPIKey, Version: testVersion,
		DefaultRegion: "us-east", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	w := &discardWriter{header: http.Header{}}
	srv.ServeHTTP(w, authorized(httptest.NewRequest(http.MethodPost, "/api/regression/run", nil)))
	if w.status != http.StatusOK {
		b.Fatalf("regression run: %d", w.status)
	}
	return srv
}

func authorized(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer "+testAPIKey)
	return r
}

// benchRoute serves method path (with body, as JSON) through srv from every core and
// reports requests per second and the CPU time per request.
func benchRoute(b *testing.B, srv *Server, method, path, body string) {
	b.Helper()
	b.ReportAllocs()
	cpuBefore := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{header: http.Header{}}
		for pb.Next() {
			req := authorized(httptest.NewRequest(method, path, strings.NewReader(body)))
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			clear(w.header)
			w.status, w.bytes = 0, 0
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("%s %s: status %d", method, path, w.status)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric((cpuTime(b)-cpuBefore).Seconds()/float64(b.N)*1e6, "cpu-µs/req")
}

// BenchmarkEnergySummaryRoute: GET /api/energy/summary over 10,000 logged entries, with
// an override. The store groups the log in SQL, so the cost is one aggregate query.
func BenchmarkEnergySummaryRoute(b *testing.B) {
	benchRoute(b, benchServer(b, 10_000), http.MethodGet, "/api/energy/summary?intensity=us-east%3D200", "")
}

// BenchmarkLayersRoute: GET /api/layers over a 10,000-entry chain: the chain's length,
// the latest regression run and the energy totals, read on every request.
func BenchmarkLayersRoute(b *testing.B) {
	benchRoute(b, benchServer(b, 10_000), http.MethodGet, "/api/layers", "")
}

// BenchmarkPolicyEvaluateRoute: POST /api/policy/evaluate of a 4 KiB prompt with an
// e-mail address in it, against the default rules.
func BenchmarkPolicyEvaluateRoute(b *testing.B) {
	prompt := strings.Repeat("Summarize the quarterly numbers for the board. ", 85) + "Send it to jane.doe@example.com."
	benchRoute(b, benchServer(b, 1), http.MethodPost, "/api/policy/evaluate", `{"model":"gpt-4o","prompt":"`+prompt+`"}`)
}

// BenchmarkRegressionRunRoute: POST /api/regression/run over the default window of 100
// entries, saved each time.
func BenchmarkRegressionRunRoute(b *testing.B) {
	benchRoute(b, benchServer(b, 1_000), http.MethodPost, "/api/regression/run", "")
}
