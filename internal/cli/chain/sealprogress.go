package chain

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// sealProgressEvery is how often at most `cairn chain seal` redraws its progress line.
const sealProgressEvery = 250 * time.Millisecond

// sealProgress draws `cairn chain seal`'s progress on a terminal, rewriting one line at
// most every sealProgressEvery: "sealing spans.jsonl: 41,000 lines, 31% of 124.2 MiB,
// 52,300 spans/s". On anything that is not a terminal it draws nothing.
type sealProgress struct {
	w     io.Writer
	name  string
	size  int64 // the input's size in bytes, 0 when unknown
	start time.Time
	drawn time.Time // when the line was last drawn; zero before
}

// newSealProgress returns a progress line on w for the input named name, of size bytes
// (0 when unknown), when w is a terminal (see newProgressBar), and nil otherwise; a nil
// line's methods do nothing.
func newSealProgress(w io.Writer, name string, size int64) *sealProgress {
	if cmdutil.NewProgressBar(w, "") == nil {
		return nil
	}
	return &sealProgress{w: w, name: name, size: size, start: time.Now()}
}

// update redraws the line from t, unless it was drawn less than sealProgressEvery ago.
func (p *sealProgress) update(t *sealTally) {
	if p == nil {
		return
	}
	if now := time.Now(); now.Sub(p.drawn) >= sealProgressEvery {
		p.drawn = now
		p.draw(t)
	}
}

// done draws the line a last time and ends it.
func (p *sealProgress) done(t *sealTally) {
	if p == nil || p.drawn.IsZero() {
		return
	}
	p.draw(t)
	_, _ = fmt.Fprintln(p.w)
}

// draw draws the line.
func (p *sealProgress) draw(t *sealTally) {
	of := ""
	if p.size > 0 {
		of = fmt.Sprintf(", %d%% of %s", min(t.bytes, p.size)*100/p.size, cmdutil.HumanBytes(p.size))
	}
	rate := ""
	if secs := time.Since(p.start).Seconds(); secs > 0 {
		rate = fmt.Sprintf(", %s spans/s", groupDigits(int64(float64(t.sealed+t.duplicates)/secs)))
	}
	// \x1b[K clears what a longer line drawn before left.
	_, _ = fmt.Fprintf(p.w, "\rsealing %s: %s lines%s%s\x1b[K", p.name, groupDigits(int64(t.lines)), of, rate)
}

// groupDigits writes n in decimal with commas between groups of three digits: 41,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
