package chain

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/clitest"
	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
)

// The CLI benchmarks run the real commands, in process, on one input generated once per
// process: cliBenchSpans spans of genaispans.AppendLine's shape (about 650 bytes, gen_ai
// attributes, a prompt and a response), the lines `make bench-compare` also feeds to the
// re-stated original.

// cliBenchSpans is how many spans the CLI benchmarks seal and verify.
const cliBenchSpans = 200_000

// cliBenchSecretHex is the chain secret of the CLI benchmarks, in hex.
const cliBenchSecretHex = "636169726e2d636c692d62656e63682d7365637265742d33322d627974657321" // "cairn-cli-bench-secret-32-bytes!"

// cliBenchDir holds the input and the sealed chain; TestMain removes it.
var cliBenchDir struct {
	once sync.Once
	path string
	err  error
}

// cliBenchPath returns the path of name in the benchmarks' directory, made once.
func cliBenchPath(tb testing.TB, name string) string {
	tb.Helper()
	cliBenchDir.once.Do(func() {
		cliBenchDir.path, cliBenchDir.err = os.MkdirTemp("", "cairn-cli-bench-")
	})
	if cliBenchDir.err != nil {
		tb.Fatal(cliBenchDir.err)
	}
	return filepath.Join(cliBenchDir.path, name)
}

// cliBenchSpansFile returns the JSON Lines file of the benchmarks' spans, written on first use.
var cliBenchSpansFile = sync.OnceValues(func() (string, error) {
	path := filepath.Join(cliBenchDir.path, "spans.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for i := range cliBenchSpans {
		line = genaispans.AppendLine(line[:0], i)
		if _, err := w.Write(line); err != nil {
			_ = f.Close()
			return "", err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
})

// benchSpansFile returns the benchmarks' spans file.
func benchSpansFile(b *testing.B) string {
	b.Helper()
	cliBenchPath(b, "")
	path, err := cliBenchSpansFile()
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// cairnQuiet runs cairn with args, its output discarded unless it fails.
func cairnQuiet(args ...string) (string, error) {
	cmd := newRootCommand()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(cmdtest.Context(context.Background()))
	return out.String(), err
}

// sealSpans seals the benchmarks' spans into a new chain at db.
func sealSpans(b *testing.B, db string) {
	b.Helper()
	out, err := cairnQuiet("chain", "seal", "--file", benchSpansFile(b), "--db", db, "--secret-hex", cliBenchSecretHex)
	if want := fmt.Sprintf("sealed %d spans;", cliBenchSpans); err != nil || !strings.HasPrefix(out, want) {
		b.Fatalf("cairn chain seal: %q, %v", out, err)
	}
}

// BenchmarkChainSealFile runs `cairn chain seal --file` of 200,000 spans into a new
// chain; one op is the whole file. See spans/s.
func BenchmarkChainSealFile(b *testing.B) {
	benchSpansFile(b) // written before the clock starts
	n := 0
	for b.Loop() {
		db := cliBenchPath(b, fmt.Sprintf("seal-%d.db", n))
		sealSpans(b, db)
		b.StopTimer()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(db + suffix)
		}
		b.StartTimer()
		n++
	}
	b.ReportMetric(float64(cliBenchSpans*n)/b.Elapsed().Seconds(), "spans/s")
}

// verifyChainDB returns a chain of the benchmarks' 200,000 spans, sealed once per process.
var verifyChainDB struct {
	once sync.Once
	path string
}

// BenchmarkChainVerifyFull runs `cairn chain verify --full` with the secret over a chain
// of the 200,000 spans, sealed once per process before the clock starts. See rows/s.
func BenchmarkChainVerifyFull(b *testing.B) {
	verifyChainDB.once.Do(func() {
		db := cliBenchPath(b, "verify.db")
		sealSpans(b, db)
		verifyChainDB.path = db
	})
	if verifyChainDB.path == "" {
		b.Fatal("the chain to verify was not sealed")
	}
	want := fmt.Sprintf("valid: full verify of seq 1..%d, %d entries checked, HMACs checked", cliBenchSpans, cliBenchSpans)
	for b.Loop() {
		out, err := cairnQuiet("chain", "verify", "--full", "--db", verifyChainDB.path, "--secret-hex", cliBenchSecretHex)
		if err != nil || !strings.HasPrefix(out, want) {
			b.Fatalf("cairn chain verify --full: %q, %v", out, err)
		}
	}
	b.ReportMetric(float64(cliBenchSpans*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestMain removes the CLI benchmarks' directory, if they made one.
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.Cleanup()
	if cliBenchDir.path != "" {
		_ = os.RemoveAll(cliBenchDir.path)
	}
	os.Exit(code)
}
