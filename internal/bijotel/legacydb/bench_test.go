package legacydb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

const benchRows = 100_000

// benchFile writes a 100,000-row chain file of the original's (one transaction, one
// prepared statement) and opens it.
func benchFile(b *testing.B) *DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), "chain.db")
	start := time.Now()
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, benchRows)
	sealed := time.Since(start)
	if err := bijoteltest.WriteDB(path, rows, bijoteltest.DBOptions{}); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d rows: sealed in %v, written in %v, %d bytes", benchRows, sealed.Round(time.Millisecond),
		(time.Since(start) - sealed).Round(time.Millisecond), fi.Size())
	db, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

func BenchmarkVerify(b *testing.B) {
	db := benchFile(b)
	secret := bijoteltest.Secret()
	b.ResetTimer()
	for b.Loop() {
		rep, err := db.Verify(context.Background(), secret, Window{})
		if err != nil || rep.Checked != benchRows {
			b.Fatalf("%+v, %v", rep, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkScan(b *testing.B) {
	db := benchFile(b)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := db.Scan(context.Background(), 0, 0, func(*bijotel.Row) error { n++; return nil }); err != nil || n != benchRows {
			b.Fatalf("%d rows, %v", n, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
