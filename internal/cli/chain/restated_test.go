package chain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/legacydb"
	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestRestatedOriginalAgreesWithCairn keeps `make bench-compare`'s baseline honest: the
// re-stated original (hack/bijotel_restated.py) seals 200 of the benchmarks' spans in its
// smoke mode and verifies them, and Cairn, reading the file as the original's, must agree
// on everything: valid, the same head, bodies in RFC 8785 form; and after the script
// tampers with a row, both must find it broken at that row for the same reason.
func TestRestatedOriginalAgreesWithCairn(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	const spans = 200
	dir := t.TempDir()
	spansPath, db := filepath.Join(dir, "spans.jsonl"), filepath.Join(dir, "chain.db")
	var lines []byte
	for i := range spans {
		lines = genaispans.AppendLine(lines, i)
	}
	if err := os.WriteFile(spansPath, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("..", "..", "..", "hack", "bijotel_restated.py")
	restated := func(args ...string) (string, error) {
		out, err := exec.Command(python, append([]string{script}, args...)...).CombinedOutput()
		return string(out), err
	}

	out, err := restated("smoke", spansPath, db, cliBenchSecretHex)
	head := regexp.MustCompile(`(?m)^head 200 ([0-9a-f]{64})$`).FindStringSubmatch(out)
	if err != nil || !strings.Contains(out, fmt.Sprintf("verify %d rows", spans)) || head == nil {
		t.Fatalf("bijotel_restated.py smoke: %v\n%s", err, out)
	}
	got, err := runCairn(t, "chain", "verify", "--db", db, "--secret-hex", cliBenchSecretHex)
	if err != nil || !strings.Contains(got, fmt.Sprintf("valid: BIJOTEL chain seq 1..%d, %d rows checked", spans, spans)) ||
		!strings.Contains(got, "head: seq 200 hmac_hash "+head[1]) {
		t.Fatalf("cairn chain verify of the script's chain (head %s): %v\n%s", head[1], err, got)
	}
	checkCanonicalBodies(t, db, spans)

	const tampered = 57
	if out, err := restated("tamper", db, fmt.Sprint(tampered)); err != nil {
		t.Fatalf("bijotel_restated.py tamper: %v\n%s", err, out)
	}
	out, err = restated("verify", db, cliBenchSecretHex)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(out, "BROKEN at seq=57: canonical_hash mismatch") {
		t.Fatalf("the script's verify of a tampered chain: %v\n%s", err, out)
	}
	_, err = runCairn(t, "chain", "verify", "--db", db, "--secret-hex", cliBenchSecretHex)
	var rowErr *bijotel.RowError
	if !errors.As(err, &rowErr) || rowErr.Seq != tampered || rowErr.Reason != bijotel.ReasonBodyHash {
		t.Fatalf("cairn chain verify of the tampered chain: %v, want seq %d %s", err, tampered, bijotel.ReasonBodyHash)
	}
}

// checkCanonicalBodies fails t unless db has n rows whose bodies are their own RFC 8785
// form by Cairn's encoder.
func checkCanonicalBodies(t *testing.T, db string, n int) {
	t.Helper()
	ldb, err := legacydb.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ldb.Close() }()
	rows := 0
	err = ldb.Scan(context.Background(), 0, 0, func(r *bijotel.Row) error {
		rows++
		again, err := canonical.Transform(r.CanonicalBody)
		if err != nil || string(again) != string(r.CanonicalBody) {
			t.Errorf("seq %d: the script's body %s, Cairn's %s (%v)", r.Seq, r.CanonicalBody, again, err)
		}
		return nil
	})
	if err != nil || rows != n {
		t.Fatalf("scanned %d rows (%v), want %d", rows, err, n)
	}
}
