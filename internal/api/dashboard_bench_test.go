package api

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/browsertest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BenchmarkDashboardMillion loads the dashboard in headless Chromium over a chain of
// 1,000,000 entries with a saved regression run over the default window, a fresh tab
// for each op: it reports first contentful paint, DOM interactive and the time until
// every section holds its data (body[data-loaded]), as the browser measured them.
// Sealing the chain takes most of the set-up (about a minute on 2 cores).
func BenchmarkDashboardMillion(b *testing.B) {
	const entries, batch = 1_000_000, 10_000
	br := browsertest.New(b, browsertest.FromEnv(os.Getenv))
	path := filepath.Join(b.TempDir(), "chain.db")
	s, err := store.Open(path, testSecret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	bodies := make([]protocol.SpanBody, batch)
	for first := int64(1); first <= entries; first += batch {
		for i := range bodies {
			bodies[i] = testBody(first + int64(i))
		}
		if _, err := s.Seal(b.Context(), bodies); err != nil {
			b.Fatal(err)
		}
	}
	run, err := analysis.RunRegression(b.Context(), s, analysis.RegressionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SaveRegression(b.Context(), run); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Store: s, DBPath: path, Secret: testSecret, Version: testVersion, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	web := httptest.NewServer(srv)
	defer web.Close()

	var fcp, interactive, loadedMS float64
	for b.Loop() {
		ctx := br.Page(b)
		start := time.Now()
		br.Run(b, ctx, chromedp.Navigate(web.URL+"/"))
		browsertest.Get(b, br, ctx, chromedp.Poll[bool](loaded, chromedp.WithPollingTimeout(60*time.Second)))
		loadedMS += float64(time.Since(start).Milliseconds())
		tm := br.Timing(b, ctx)
		fcp += tm.FirstContentfulPaint
		interactive += tm.DOMInteractive
	}
	n := float64(b.N)
	b.ReportMetric(fcp/n, "ms-first-contentful-paint")
	b.ReportMetric(interactive/n, "ms-dom-interactive")
	b.ReportMetric(loadedMS/n, "ms-data-loaded")
	br.NoConsoleErrors(b)
	br.NoExternalRequests(b)
}
