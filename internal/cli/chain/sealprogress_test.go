package chain

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

func TestGroupDigitsAndHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 41000: "41,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{999: "999 B", 1024: "1.0 KiB", 130360327: "124.3 MiB", 2_500_000_000: "2.3 GiB"} {
		if got := cmdutil.HumanBytes(n); got != want {
			t.Errorf("cmdutil.HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSealProgressRedrawsAFewTimesASecond updates the line 10,000 times in a burst: it is
// drawn once (the first update), then once more by done, with human units.
func TestSealProgressRedrawsAFewTimesASecond(t *testing.T) {
	var out bytes.Buffer
	p := &sealProgress{w: &out, name: "spans.jsonl", size: 130360327, start: time.Now().Add(-time.Second)}
	tally := &sealTally{}
	for i := 1; i <= 10000; i++ {
		tally.lines, tally.sealed, tally.bytes = i, i, int64(i)*6518
		p.update(tally)
	}
	p.done(tally)
	if draws := strings.Count(out.String(), "\r"); draws != 2 {
		t.Fatalf("%d draws, want 2: %q", draws, out.String())
	}
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	if !strings.HasPrefix(last, "\rsealing spans.jsonl: 10,000 lines, 49% of 124.3 MiB, ") || !strings.HasSuffix(last, " spans/s\x1b[K\n") {
		t.Fatalf("last line %q", last)
	}
}
