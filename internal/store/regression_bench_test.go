package store

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// BenchmarkRegressionWindow runs the real path of a regression run, windows of 100,
// 1,000 and 10,000 entries over a chain of 12,000: read the window from SQLite, decode
// every body, test every value of the four dimensions with both tests, and save the
// run. Issue 17 asks for under 50 ms at 10,000.
func BenchmarkRegressionWindow(b *testing.B) {
	const entries = 12_000
	s, err := Open(filepath.Join(b.TempDir(), "chain.db"), testSecret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for first := int64(1); first <= entries; first += 1000 {
		if _, err := s.Seal(b.Context(), testBodies(first, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	for _, window := range []int{100, 1000, 10_000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			for b.Loop() {
				run, err := analysis.RunRegression(b.Context(), s, analysis.RegressionOptions{Window: window})
				if err != nil || run.EntriesConsidered != window || run.FirstSeq != entries-int64(window)+1 {
					b.Fatalf("%+v, %v", run, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/run")
		})
	}
}
