package store

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchRows is the size of the chain the read benchmarks use.
const benchRows = 1_000_000

// benchDir holds the benchmark chain; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		if err := os.RemoveAll(benchDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// benchChain is the path of a 1,000,000-entry chain with bodies of about 500 bytes, built
// once per process (by Seal, in batches of 1,000) in a temporary directory and shared by
// the read benchmarks. To keep it between runs, set CAIRN_STORE_BENCH_CHAIN to a path: the
// chain is built there if that file does not hold one already.
var benchChain = sync.OnceValues(func() (string, error) {
	path := os.Getenv("CAIRN_STORE_BENCH_CHAIN")
	if path == "" {
		dir, err := os.MkdirTemp("", "cairn-store-bench-")
		if err != nil {
			return "", err
		}
		benchDir = dir
		path = filepath.Join(dir, "chain.db")
	}
	s, err := Open(path, testSecret)
	if err != nil {
		return "", err
	}
	defer func() { _ = s.Close() }()
	st, err := s.Stats(context.Background())
	if err != nil {
		return "", err
	}
	for first := st.LastSeq + 1; first <= benchRows; first += 1000 {
		if _, err := s.Seal(context.Background(), testBodies(first, 1000)); err != nil {
			return "", err
		}
	}
	return path, nil
})

func benchStore(b *testing.B, secret []byte) (*Store, string) {
	b.Helper()
	path, err := benchChain()
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(path, secret)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, path
}

// BenchmarkSealBatched seals batches of 1,000 bodies of about 500 bytes into a new chain
// with SealOnce, as cairn serve and cairn chain seal do: each batch's spans are new (their
// ids are changed, untimed, between batches), so every one is looked up and sealed. One op
// is one batch; see spans/s.
func BenchmarkSealBatched(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "chain.db"), testSecret)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	bodies := testBodies(1, 1000)
	batch := 0
	for b.Loop() {
		b.StopTimer()
		batch++
		for i := range bodies {
			bodies[i].TraceID = fmt.Sprintf("%016x%016x", batch, i+1)
			bodies[i].SpanID = fmt.Sprintf("%016x", batch<<16|(i+1))
		}
		b.StartTimer()
		r, err := s.SealOnce(b.Context(), bodies)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Entries) != len(bodies) {
			b.Fatalf("sealed %d of %d", len(r.Entries), len(bodies))
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkVerifyFull1M verifies the 1,000,000-entry chain fully, with the secret. It also
// times one bare scan of the same rows before the benchmark loop and reports how many times
// slower the verification is (verify/scan).
func BenchmarkVerifyFull1M(b *testing.B) { benchmarkVerifyFull1M(b, VerifyOptions{}) }

// BenchmarkVerifyFull1MRanges is BenchmarkVerifyFull1M in ranges, one a core, instead of
// a single pass (one reader, checking workers on every core): the two on one file.
func BenchmarkVerifyFull1MRanges(b *testing.B) {
	benchmarkVerifyFull1M(b, VerifyOptions{Ranges: runtime.GOMAXPROCS(0)})
}

// BenchmarkVerifyFull1MThroughSQL is BenchmarkVerifyFull1M reading every row through
// SQLite's engine, as before the pages reader (rowsource.go): the two on one file.
func BenchmarkVerifyFull1MThroughSQL(b *testing.B) {
	benchmarkVerifyFull1M(b, VerifyOptions{ThroughSQL: true})
}

func benchmarkVerifyFull1M(b *testing.B, o VerifyOptions) {
	o.Full = true
	s, path := benchStore(b, testSecret)
	scan := bareScan(b, path)
	for b.Loop() {
		r, err := s.Verify(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		if r.Checked != benchRows {
			b.Fatalf("checked %d", r.Checked)
		}
	}
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(benchRows/perOp.Seconds(), "rows/s")
	b.ReportMetric(float64(perOp)/float64(scan), "verify/scan")
}

// BenchmarkScan1M is the floor for BenchmarkVerifyFull1M: a bare SELECT of the same
// columns over the same file, every column scanned into []byte (sql.RawBytes).
func BenchmarkScan1M(b *testing.B) {
	_, path := benchStore(b, testSecret)
	for b.Loop() {
		bareScan(b, path)
	}
	b.ReportMetric(benchRows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkStats1M reads the stats of the 1,000,000-entry chain; counting the rows reads
// every page of the table.
func BenchmarkStats1M(b *testing.B) {
	s, _ := benchStore(b, nil)
	for _, bc := range []struct {
		name  string
		stats func(context.Context) (Stats, error)
	}{{"counted", s.Stats}, {"by-seq", s.StatsBySeq}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				st, err := bc.stats(b.Context())
				if err != nil || st.Entries != benchRows {
					b.Fatalf("%+v, %v", st, err)
				}
			}
		})
	}
}

// bareScan reads every row of the chain at path and returns how long it took.
func bareScan(b *testing.B, path string) time.Duration {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	start := time.Now()
	rows, err := db.Query(selectRows, 1, benchRows)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	cols := make([]sql.RawBytes, 10)
	dest := make([]any, len(cols))
	for i := range cols {
		dest[i] = &cols[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != benchRows {
		b.Fatalf("scanned %d rows: %v", n, err)
	}
	return time.Since(start)
}

// BenchmarkExport1M exports the 1,000,000-entry chain in a child process, so that the peak
// resident memory it reports (peak-RSS-MB, from the child's VmHWM) is the export's alone.
func BenchmarkExport1M(b *testing.B) {
	_, path := benchStore(b, testSecret)
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExportChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAIRN_STORE_EXPORT_CHILD="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var rssKB, nanos, bytes int64
		if _, err := fmt.Sscanf(lastLine(string(out), "export:"), "export: maxrss_kb=%d ns=%d bytes=%d", &rssKB, &nanos, &bytes); err != nil {
			b.Fatalf("child printed %q: %v", out, err)
		}
		b.ReportMetric(float64(rssKB)/1024, "peak-RSS-MB")
		b.ReportMetric(benchRows/time.Duration(nanos).Seconds(), "rows/s")
		b.ReportMetric(float64(bytes)/(1<<20), "export-MB")
	}
}

// TestExportChild is the child of BenchmarkExport1M; it does nothing unless that benchmark
// started it.
func TestExportChild(t *testing.T) {
	path := os.Getenv("CAIRN_STORE_EXPORT_CHILD")
	if path == "" {
		t.Skip("run by BenchmarkExport1M")
	}
	start := time.Now()
	s := openStore(t, path, testSecret)
	var w countingWriter
	h, err := s.Export(t.Context(), &w, ExportOptions{Key: testKey, ExportedAt: testTime})
	if err != nil {
		t.Fatal(err)
	}
	if h.LastSeq != benchRows {
		t.Fatalf("exported up to %d", h.LastSeq)
	}
	// VmHWM is this process image's peak resident set. (getrusage's ru_maxrss would also
	// count the parent's peak, which a child inherits through fork.)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	var hwm int64
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &hwm); err != nil {
				t.Fatal(err)
			}
		}
	}
	fmt.Printf("export: maxrss_kb=%d ns=%d bytes=%d\n", hwm, time.Since(start).Nanoseconds(), w.n)
}

// countingWriter discards what it is given and counts it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

func lastLine(out, prefix string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return ""
}
