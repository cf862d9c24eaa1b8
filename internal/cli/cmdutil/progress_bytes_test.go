package cmdutil

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		30_512_345: "29.1 MiB", 5 << 30: "5.0 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTransferBarRedrawsAFewTimesASecond: 11,578 reads of an upload in one second draw
// the bar at most 1 + 1s/RedrawInterval times plus the final 100%, in human units.
func TestTransferBarRedrawsAFewTimesASecond(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	bar := &TransferBar{w: &out, label: "upload", now: func() time.Time { return clock }}
	const reads, total = 11_578, 30_512_345
	for i := 1; i <= reads; i++ {
		clock = clock.Add(time.Second / reads)
		bar.Update(int64(i)*total/reads, total)
	}
	bar.Done()
	draws := strings.Count(out.String(), "\r")
	if maxDraws := int(time.Second/RedrawInterval) + 2; draws > maxDraws || draws < 2 {
		t.Fatalf("%d draws for %d reads in a second, want 2..%d", draws, reads, maxDraws)
	}
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	for _, want := range []string{"100%", "29.1 MiB / 29.1 MiB", "MiB/s"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last draw %q lacks %q", last, want)
		}
	}
}
