package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the full verification in ranges (VerifyOptions.Ranges): the window is cut
// into consecutive ranges, and each is read and checked by its own goroutine in its own read
// transaction (its own SQLite connection), start to end, with nothing shared but a
// counter. What one range cannot check alone, the link of its first row to the row
// before it, is checked when the ranges are joined, in seq order, so that the first
// failure reported is the one a single pass in seq order reports (see joinRanges).

// span is a range of seqs, both ends included.
type span struct{ lo, hi int64 }

// splitRanges cuts lo..hi into n consecutive ranges of nearly equal size (fewer when
// lo..hi has fewer than n seqs). The first range starts at lo and also holds head..lo-1:
// head is where the window starts, lo where the rows that may be checked apart begin.
func splitRanges(head, lo, hi int64, n int) []span {
	size := hi - lo + 1
	n = int(min(int64(max(n, 1)), max(size, 1)))
	out := make([]span, 0, n)
	start := head
	for i := range n {
		end := lo - 1 + size*int64(i+1)/int64(n)
		out = append(out, span{start, end})
		start = end + 1
	}
	return out
}

// rangeResult is what one range found.
type rangeResult struct {
	span
	// headPrev is the prev_hash of the range's first row; the join compares it with the
	// previous range's lastHMAC. Unused for the first range, whose linker reads the row
	// before the window itself.
	headPrev string
	// preLink is a failure of the first row that comes before its link in the order the
	// checks are reported (a missing seq, a malformed row), for every range but the first.
	preLink error
	// headErr is the first row's other failure, reported only if its link holds.
	headErr error
	// err is the first failure after the first row (or any failure, in the first range).
	err error
	// passed counts the rows that passed, the first row included only if headErr is nil.
	passed int64
	// lastHMAC is the hmac_hash of the range's last row, when every row passed.
	lastHMAC string
}

// verifyRanges checks every row of the window from..to, cut into n ranges. tx is the
// verification's transaction, used by the first range; imports is given the first range's
// rows, and the others' must lie after the imported entries (see Verify). It returns the
// number of rows that passed before the first failure, and that failure.
func (s *Store) verifyRanges(ctx context.Context, tx *sql.Tx, from, to int64, spans []span,
	imports importCheck, throughSQL bool, progress func(done, total int64)) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]rangeResult, len(spans))
	var failedAt atomic.Int64 // the lowest range index with a failure, len(spans) when none
	failedAt.Store(int64(len(spans)))
	var done atomic.Int64
	stop := reportProgress(progress, &done, to-from+1)
	var wg sync.WaitGroup
	for i, sp := range spans {
		wg.Go(func() {
			r := &results[i]
			r.span = sp
			rtx := tx
			if i > 0 {
				var err error
				if rtx, err = s.readTx(ctx); err != nil {
					r.preLink = err
					lowerTo(&failedAt, int64(i))
					return
				}
				defer func() { _ = rtx.Rollback() }() // read-only: nothing to undo
			}
			ic := imports
			if i > 0 {
				ic = newImportCheck(nil, sp.lo, nil) // after the imported entries: Place only
			}
			rv := &rangeVerifier{s: s, tx: rtx, result: r, imports: ic, first: i == 0, to: to, throughSQL: throughSQL, done: &done,
				stopped: func() bool { return failedAt.Load() < int64(i) }}
			if rv.run(ctx) {
				lowerTo(&failedAt, int64(i))
			}
		})
	}
	wg.Wait()
	stop()
	return joinRanges(results)
}

// lowerTo sets a to v if v is lower.
func lowerTo(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v >= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// joinRanges checks the links between consecutive ranges and returns the rows that passed
// before the first failure in seq order, and that failure. At a range's first row the
// checks come in the order linker.check gives them: seq and shape, then the link, then
// the row's other verdicts.
func joinRanges(results []rangeResult) (int64, error) {
	var passed int64
	for i := range results {
		r := &results[i]
		if i > 0 {
			if r.preLink != nil {
				return passed, r.preLink
			}
			if want := results[i-1].lastHMAC; r.headPrev != want {
				return passed, &protocol.EntryError{Seq: r.lo, Reason: protocol.ReasonLink,
					Err: &protocol.MismatchError{Field: "prev_hash", Want: want, Got: r.headPrev}}
			}
			if r.headErr != nil {
				return passed, r.headErr
			}
		}
		passed += r.passed
		if r.err != nil {
			return passed, r.err
		}
	}
	return passed, nil
}

// rangeVerifier reads and checks one range's rows in one goroutine.
type rangeVerifier struct {
	s          *Store
	tx         *sql.Tx
	result     *rangeResult
	imports    importCheck
	first      bool  // the window's first range
	to         int64 // the window's last seq: the query reads past the range's end up to it
	throughSQL bool  // see VerifyOptions
	done       *atomic.Int64
	stopped    func() bool // a range before this one has failed: nothing here can matter
}

// progressEvery is how many rows a range checks between additions to the shared count.
const progressEvery = 256

// run checks the range, and returns true when it found a failure.
func (v *rangeVerifier) run(ctx context.Context) bool {
	r := v.result
	l := newLinker(r.lo)
	if !v.first {
		l = &linker{from: r.lo, next: r.lo}
	}
	c := protocol.NewEntryChecker(v.s.newMAC())
	var (
		ro      row
		body    []byte
		pending int64
	)
	defer func() { v.done.Add(pending) }()
	// Read past the range's end (up to the window's), so that rows missing at its end
	// are reported with the seq found instead, as a single pass reports them.
	rows, err := v.s.openRows(ctx, v.tx, l.lo(), v.to, v.throughSQL)
	if err != nil {
		return v.fail(fmt.Errorf("read chain: %w", err))
	}
	defer rows.close()
	head := !v.first
	e := &ro.e
	for {
		var ok bool
		if body, ok, err = rows.next(e, body[:0]); err != nil {
			return v.fail(fmt.Errorf("read chain: %w", err))
		}
		if !ok {
			break
		}
		if e.Seq > r.hi && l.next > r.hi {
			break // the row after the range, which is the next range's
		}
		ro.kind, ro.err = c.Check(e)
		if head {
			l.prevHMAC = e.PrevHash // the join checks this link
		}
		err := l.check(&ro)
		if err == nil && e.Seq >= r.lo {
			err = v.imports.check(&ro)
		}
		switch {
		case err != nil && head && (reasonOf(err) == protocol.ReasonSeq || reasonOf(err) == protocol.ReasonMalformed):
			r.preLink = err
			return true
		case head:
			r.headPrev, r.headErr = e.PrevHash, err
			if err != nil {
				return true
			}
		case err != nil:
			r.err = err
			return true
		}
		head = false
		if e.Seq >= r.lo {
			r.passed++
			r.lastHMAC = e.HMACHash
			if pending++; pending == progressEvery {
				v.done.Add(pending)
				pending = 0
				if v.stopped() {
					return false
				}
			}
		}
	}
	if err := l.finish(r.hi); err != nil {
		if head {
			r.preLink = err // the range has no row at all
		} else {
			r.err = err
		}
		return true
	}
	return false
}

// fail records err, which is not a row's verdict (the rows could not be read), as the
// range's failure: reported whatever the link to the range before says.
func (v *rangeVerifier) fail(err error) bool {
	if v.first {
		v.result.err = err
	} else {
		v.result.preLink = err
	}
	return true
}

// reasonOf returns the protocol.Reason* of err, "" when it is no *protocol.EntryError.
func reasonOf(err error) string {
	var ee *protocol.EntryError
	if errors.As(err, &ee) {
		return ee.Reason
	}
	return ""
}

// reportProgress calls fn with done's value and total every 100 ms until the returned
// function is called. fn may be nil.
func reportProgress(fn func(done, total int64), done *atomic.Int64, total int64) func() {
	if fn == nil {
		return func() {}
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fn(done.Load(), total)
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
	}
}

// rangesFor returns how many ranges Verify cuts the window into: o.Ranges, or one (a
// single pass, its checks on every core) when that is 0. Since rows are read from the
// file's pages (rowsource.go), the single reader keeps both cores' checks busy, and a
// single pass verified 1M rows at 818k-826k rows/s where two or four ranges gave 539k-696k
// (docs/BENCHMARKS.md); through SQL the two were level.
func rangesFor(o VerifyOptions) int {
	return max(1, o.Ranges)
}
