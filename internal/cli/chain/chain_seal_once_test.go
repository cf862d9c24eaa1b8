package chain

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
)

// cairnBinary is the real cairn binary, built once per test process into the CLI
// benchmarks' directory (which TestMain removes).
var cairnBinary struct {
	once sync.Once
	path string
	err  error
}

// builtCairn returns the path of the cairn binary built from cmd/cairn.
func builtCairn(t *testing.T) string {
	t.Helper()
	dir := cliBenchPath(t, "")
	cairnBinary.once.Do(func() {
		path := filepath.Join(dir, "cairn")
		out, err := exec.Command("go", "build", "-o", path, "github.com/cairn-dev/cairn/cmd/cairn").CombinedOutput()
		if err != nil {
			cairnBinary.err = errors.New("go build: " + err.Error() + "\n" + string(out))
			return
		}
		cairnBinary.path = path
	})
	if cairnBinary.err != nil {
		t.Fatal(cairnBinary.err)
	}
	return cairnBinary.path
}

// sealRun is a finished run of the cairn binary.
type sealRun struct {
	stdout, stderr string
	code           int
}

// runBinary runs the cairn binary with args and returns what it printed and its exit code.
func runBinary(t *testing.T, args ...string) sealRun {
	t.Helper()
	cmd := exec.Command(builtCairn(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return sealRun{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// onceSecretHex is the secret of the chains these tests seal.
const onceSecretHex = "5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c"

// chainEntries is how many entries the chain at db holds.
func chainEntries(t *testing.T, db string) int64 {
	t.Helper()
	s, err := store.OpenExisting(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	n, err := s.LastSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writeSpans writes n spans (genAISpanLines) to a file in a new directory, and returns
// its path and the path of a chain beside it.
func writeSpans(t *testing.T, lines []byte) (spans, db string) {
	t.Helper()
	dir := t.TempDir()
	spans, db = filepath.Join(dir, "spans.jsonl"), filepath.Join(dir, "chain.db")
	if err := os.WriteFile(spans, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	return spans, db
}

// TestChainSealTwiceSealsOnce seals the same file twice with the real binary: the second
// run seals nothing and says so.
func TestChainSealTwiceSealsOnce(t *testing.T) {
	spans, db := writeSpans(t, genAISpanLines(2500))
	args := []string{"chain", "seal", "--file", spans, "--db", db, "--secret-hex", onceSecretHex}
	if r := runBinary(t, args...); r.code != 0 || !strings.HasPrefix(r.stdout, "sealed 2500 spans; chain head seq 2500 ") {
		t.Fatalf("first seal: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r := runBinary(t, args...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "sealed 0 spans (2500 already sealed, skipped); chain head seq 2500 ") {
		t.Errorf("second seal: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if n := chainEntries(t, db); n != 2500 {
		t.Fatalf("the chain holds %d entries after sealing 2,500 spans twice, want 2500", n)
	}
}

// TestChainSealRefusesChangedSpans seals a file, then the file with one span changed
// under its ids and one span added: the added one is sealed, the changed one refused and
// named by its line, exit 1.
func TestChainSealRefusesChangedSpans(t *testing.T) {
	spans, db := writeSpans(t, genAISpanLines(1200))
	args := []string{"chain", "seal", "--file", spans, "--db", db, "--secret-hex", onceSecretHex}
	if r := runBinary(t, args...); r.code != 0 {
		t.Fatalf("first seal: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	changed := replaceNth(string(genAISpanLines(1201)), `"status_code":"OK"`, `"status_code":"ERROR"`, 1100)
	if err := os.WriteFile(spans, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, args...)
	wantErr := []string{"line 1100: span \"chat gpt-4o-mini\" (trace_id 0000000000000000000000000000044c, span_id 000000000000044c) " +
		"has other content than entry seq 1100 with the same ids: not sealed", "1 spans refused"}
	if r.code != cmdutil.ExitError || !strings.HasPrefix(r.stdout, "sealed 1 spans (1199 already sealed, skipped); chain head seq 1201 ") {
		t.Errorf("second seal: exit %d, %q", r.code, r.stdout)
	}
	for _, w := range wantErr {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not say %q", r.stderr, w)
		}
	}
	if n := chainEntries(t, db); n != 1201 {
		t.Fatalf("the chain holds %d entries, want 1201", n)
	}
}

// TestChainSealInterruptedContinues sends SIGINT to the real binary sealing a large file:
// it exits 130 and says which lines are sealed, and running it again seals the rest, each
// span once, into a chain that verifies.
func TestChainSealInterruptedContinues(t *testing.T) {
	if testing.Short() {
		t.Skip("seals 120,000 spans")
	}
	const total = 120_000
	spans, db := writeSpans(t, genAISpanLines(total))
	args := []string{"chain", "seal", "--file", spans, "--db", db, "--secret-hex", onceSecretHex}
	cmd := exec.Command(builtCairn(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEntries(t, db)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitInterrupted {
		t.Fatalf("exit %d after SIGINT, want %d; stdout %q, stderr %q", code, cmdutil.ExitInterrupted, stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`^interrupted: lines 1–([0-9,]+) of ` + regexp.QuoteMeta(spans) +
		` sealed \(seq 1–([0-9,]+) by this run\); run the same command again to continue — sealed spans are skipped\n$`).
		FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q", stderr.String())
	}
	lines, seq := commaInt(t, m[1]), commaInt(t, m[2])
	if lines != seq || seq != chainEntries(t, db) || seq == total {
		t.Fatalf("lines 1-%d, seq 1-%d sealed, the chain holds %d", lines, seq, chainEntries(t, db))
	}
	r := runBinary(t, args...)
	want := "sealed " + strconv.FormatInt(total-seq, 10) + " spans (" + strconv.FormatInt(seq, 10) + " already sealed, skipped); chain head seq 120000 "
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Fatalf("re-run: exit %d, %q %q; want %q", r.code, r.stdout, r.stderr, want)
	}
	if n := chainEntries(t, db); n != total {
		t.Fatalf("the chain holds %d entries, want %d", n, total)
	}
	if r := runBinary(t, "chain", "verify", "--full", "--db", db, "--secret-hex", onceSecretHex); r.code != 0 ||
		!strings.Contains(r.stdout, "120000 entries checked") {
		t.Fatalf("verify: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// waitForEntries waits until the chain at db has entries.
func waitForEntries(t *testing.T, db string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if _, err := os.Stat(db); err == nil {
			if s, err := store.OpenExisting(db, nil); err == nil {
				n, err := s.LastSeq(ctx)
				_ = s.Close()
				if err == nil && n > 0 {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no entry sealed within a minute")
}

// commaInt parses a number written with groupDigits.
func commaInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
