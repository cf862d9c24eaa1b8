package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// RedrawInterval is the least time between two draws of a TransferBar: a few a second
// are readable, while a draw per read (thousands a second) only floods the terminal.
const RedrawInterval = 200 * time.Millisecond

// TransferBar draws a transfer of bytes on a terminal, in human units with its rate:
// "upload [#########.....]  45%  13.2 MiB / 29.1 MiB  8.4 MiB/s". It redraws at most
// every RedrawInterval, and once more at the end. On anything that is not a terminal it
// is nil, and draws nothing.
type TransferBar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	now   func() time.Time
	start time.Time
	last  time.Time // of the last draw; zero before the first
	// finished is set once the whole total was drawn.
	finished bool
	draws    int
}

// NewTransferBar returns a bar on w when w is a terminal, and nil otherwise; a nil bar's
// methods do nothing.
func NewTransferBar(w io.Writer, label string) *TransferBar {
	if NewProgressBar(w, label) == nil {
		return nil
	}
	return &TransferBar{w: w, label: label, now: time.Now}
}

// Update records done of total bytes, drawing when RedrawInterval has passed since the
// last draw or the transfer is complete. It is safe to call from any goroutine.
func (t *TransferBar) Update(done, total int64) {
	if t == nil || total <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.start.IsZero() {
		t.start = now
	}
	complete := done >= total
	if t.finished || (!t.last.IsZero() && now.Sub(t.last) < RedrawInterval && !complete) {
		return
	}
	t.last, t.finished = now, complete
	t.draws++
	const width = 30
	filled := int(min(done, total) * width / total)
	rate := ""
	if secs := now.Sub(t.start).Seconds(); secs > 0 {
		rate = "  " + HumanBytes(int64(float64(done)/secs)) + "/s"
	}
	_, _ = fmt.Fprintf(t.w, "\r%s [%s%s] %3d%%  %s / %s%s\x1b[K", t.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), min(done, total)*100/total,
		HumanBytes(done), HumanBytes(total), rate)
}

// Done ends the bar's line.
func (t *TransferBar) Done() {
	if t == nil || t.draws == 0 {
		return
	}
	_, _ = fmt.Fprintln(t.w)
}

// HumanBytes writes n bytes in binary units: "512 B", "1.5 KiB", "29.1 MiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
