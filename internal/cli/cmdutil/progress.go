package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ProgressBar draws "[#####.....]  50%  500000/1000000 rows" on a terminal, rewriting one
// line. On anything that is not a terminal it draws nothing, so piped output stays clean.
type ProgressBar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	shown bool
}

// NewProgressBar returns a bar on w when w is a terminal, and nil otherwise; a nil bar's
// methods do nothing.
func NewProgressBar(w io.Writer, label string) *ProgressBar {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if info, err := f.Stat(); err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &ProgressBar{w: w, label: label}
}

// Update draws done of total. It is safe to call from any goroutine.
func (p *ProgressBar) Update(done, total int64) {
	if p == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	const width = 30
	filled := int(min(done, total) * width / total)
	_, _ = fmt.Fprintf(p.w, "\r%s [%s%s] %3d%%  %d/%d", p.label,
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), done*100/total, done, total)
	p.shown = true
}

// Done ends the bar's line.
func (p *ProgressBar) Done() {
	if p == nil || !p.shown {
		return
	}
	_, _ = fmt.Fprintln(p.w)
}

// ProgressFunc returns a callback for store operations, or nil without a terminal.
func (p *ProgressBar) ProgressFunc() func(done, total int64) {
	if p == nil {
		return nil
	}
	return p.Update
}
