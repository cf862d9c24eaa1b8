package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/store"
)

// BenchmarkImport100k imports a 100,000-row legacy chain into a new Cairn chain: verify
// every legacy row, write the legacy export, seal the bridge and the rows. The rows/s
// metric is the figure docs/BENCHMARKS.md records (the target: 20,000).
func BenchmarkImport100k(b *testing.B) {
	const rows = 100_000
	f := newFixture(b, bijoteltest.Secret(), 1, rows)
	i := 0
	for b.Loop() {
		i++
		f.into = filepath.Join(f.dir, fmt.Sprintf("chain-%d.db", i))
		f.export = filepath.Join(f.dir, fmt.Sprintf("export-%d.json", i))
		if _, err := f.run(b, cairnSecret, bijoteltest.Secret(), nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, p := range []string{f.into, f.into + "-wal", f.into + "-shm", f.export} {
			_ = os.Remove(p)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkVerifyImported100k is a full verification of the imported chain, bridge and
// digest included.
func BenchmarkVerifyImported100k(b *testing.B) {
	const rows = 100_000
	f := newFixture(b, bijoteltest.Secret(), 1, rows)
	f.mustRun(b, cairnSecret, bijoteltest.Secret())
	s, err := store.Open(f.into, cairnSecret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for b.Loop() {
		report, err := s.Verify(b.Context(), store.VerifyOptions{Full: true})
		if err != nil || !report.Import.ColumnsChecked {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((rows+1)*b.N)/b.Elapsed().Seconds(), "entries/s")
}
