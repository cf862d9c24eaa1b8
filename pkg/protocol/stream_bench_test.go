package protocol

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// streamEntries is how many entries the streaming benchmark writes and verifies.
const streamEntries = 1_000_000

// BenchmarkStreamMillionEntries writes an export of one million synthetic entries and
// verifies it as it is written (writer and verifier joined by a pipe), in a child process
// so that the peak resident memory it reports belongs to this work alone.
func BenchmarkStreamMillionEntries(b *testing.B) {
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStreamChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAIRN_STREAM_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var rssKB, nanos int64
		if _, err := fmt.Sscanf(lastLine(string(out), "stream:"), "stream: maxrss_kb=%d ns=%d", &rssKB, &nanos); err != nil {
			b.Fatalf("child printed %q: %v", out, err)
		}
		b.ReportMetric(float64(rssKB)/1024, "peak-RSS-MB")
		b.ReportMetric(streamEntries/time.Duration(nanos).Seconds(), "entries/s")
	}
}

// TestStreamChild is the child of BenchmarkStreamMillionEntries; it does nothing unless
// that benchmark started it.
func TestStreamChild(t *testing.T) {
	if os.Getenv("CAIRN_STREAM_CHILD") == "" {
		t.Skip("run by BenchmarkStreamMillionEntries")
	}
	start := time.Now()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeSynthetic(pw, streamEntries)) }()
	report, err := VerifyExport(pr, VerifyOptions{Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	if report.Entries != streamEntries {
		t.Fatalf("verified %d entries, want %d", report.Entries, streamEntries)
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
	fmt.Printf("stream: maxrss_kb=%d ns=%d\n", hwm, time.Since(start).Nanoseconds())
}

// writeSynthetic writes an export of n entries generated one at a time.
func writeSynthetic(w io.Writer, n int) error {
	x, err := NewExportWriter(w, ExportOptions{Secret: testSecret, Key: testKey, ExportedAt: testTime})
	if err != nil {
		return err
	}
	prev := GenesisPrevHash
	for seq := int64(1); seq <= int64(n); seq++ {
		e, err := NewEntry(testSecret, seq, prev, testBody(seq, 64))
		if err != nil {
			return err
		}
		if err := x.Write(e); err != nil {
			return err
		}
		prev = e.HMACHash
	}
	_, err = x.Close()
	return err
}

func lastLine(out, prefix string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return ""
}
