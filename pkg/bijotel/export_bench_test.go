package bijotel_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// writeLargeExport writes an n-row v1 export of a chain from GENESIS to path, streaming
// (two passes over the generator: the header states the head first), and returns its size.
func writeLargeExport(tb testing.TB, path string, n int) int64 {
	tb.Helper()
	const batch = 1000
	secret := bijoteltest.Secret()
	each := func(fn func(rows []bijotel.Row)) {
		prev := bijotel.GenesisHash
		for seq := 1; seq <= n; seq += batch {
			rows := bijoteltest.Chain(secret, int64(seq), prev, min(batch, n-seq+1))
			fn(rows)
			prev = rows[len(rows)-1].HMACHash
		}
	}
	head := bijotel.GenesisHash
	each(func(rows []bijotel.Row) { head = rows[len(rows)-1].HMACHash })
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	x, err := bijotel.NewExportWriter(f, bijotel.ExportHeader{
		Format: bijotel.FormatV1, CreatedAt: bijoteltest.CreatedAt, EntriesCount: int64(n), HeadHash: head,
		ChainSignature: bijotel.ChainSignature(secret, head, int64(n)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	each(func(rows []bijotel.Row) {
		for i := range rows {
			if err := x.WriteRow(&rows[i]); err != nil {
				tb.Fatal(err)
			}
		}
	})
	if err := x.Close(); err != nil {
		tb.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return info.Size()
}

// BenchmarkVerifyExport verifies a 100,000-entry v1 export with the secret, read from a
// file as verify-export reads it.
func BenchmarkVerifyExport(b *testing.B) {
	path := filepath.Join(b.TempDir(), "export.json")
	size := writeLargeExport(b, path, 100_000)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		report, err := bijotel.VerifyExport(bufio.NewReaderSize(f, 1<<20), bijotel.VerifyOptions{Secret: bijoteltest.Secret()})
		_ = f.Close()
		if err != nil || report.Envelope.Entries != 100_000 {
			b.Fatalf("%v", err)
		}
	}
	b.ReportMetric(float64(100_000*b.N)/b.Elapsed().Seconds(), "entries/s")
}
