package store

import (
	"context"
	"crypto/hmac"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// VerifyOptions says how much of the chain Verify checks.
type VerifyOptions struct {
	// Full checks every entry of the window; otherwise only its first and last.
	Full bool
	// From and To bound the window (inclusive); 0 means the chain's first (1) and last seq.
	From, To int64
	// Ranges is how many ranges a full verification cuts the window into, each read and
	// checked at the same time as the others on its own connection. 0 or 1 checks the
	// window in a single pass: one goroutine reads, workers on every core check (the
	// faster since rows are read from the file's pages; see rangesFor).
	Ranges int
	// ThroughSQL reads every row through SQLite's engine instead of straight from the
	// database file's pages (see rowsource.go): slower, and what the pages reader falls
	// back to on its own for anything it cannot read. For comparisons.
	ThroughSQL bool
	// Progress, if not nil, is called with the entries checked so far and how many will
	// be (the window's size, or at most 2 for a smoke verification), at most about ten
	// times a second and once at the end.
	Progress func(done, total int64)
}

// SeqRange is a range of seqs, both ends included.
type SeqRange struct{ First, Last int64 }

// VerifyReport says what Verify checked.
type VerifyReport struct {
	// From and To are the window; both 0 for an empty chain.
	From, To int64
	// Checked is how many entries passed every check.
	Checked int64
	// HMACsChecked is true when the store has the secret, so HMACs were recomputed.
	HMACsChecked bool
	// Full is true for a full verification.
	Full bool
	// Passed lists the entries that passed, as ranges of seq in order: for a full
	// verification the window's entries before the first failure (all of them when it
	// passes), for a smoke verification its first and last entries if they passed.
	Passed []SeqRange
	// NotChecked is how many entries of the window were not checked: those between the
	// first and the last in a smoke verification, and those after a failure.
	NotChecked int64
	// Import is what was checked of the entries imported from BIJOTEL, when the chain
	// begins with a bridge record; nil otherwise.
	Import *ImportReport
}

// Verify checks the window From..To of the chain. The window is fixed in one read
// transaction, so appends made meanwhile are not seen.
//
// A smoke verification (Full false) checks the window's first and last entries fully:
// protocol.CheckEntry (shape, body hash, columns against the body, and the HMAC when the
// store has the secret) and the link to the row before each. A full verification checks
// every entry of the window that way, and that no seq is missing, reading the rows from
// the database file's pages (rowsource.go) in one pass and checking them on every core.
// Asked to (VerifyOptions.Ranges), it cuts the window into ranges, each read and checked
// by one goroutine in a read transaction of its own; the link from each range's first row
// to the row before it is checked when the ranges are joined, in seq order, so the failure
// reported is the one a single pass in seq order would report. (Rows in the window are
// never rewritten by Cairn, only appended after it, so every range's transaction sees the
// same rows.)
//
// A failure is a *protocol.EntryError for the first failing seq, with a protocol.Reason*.
// A missing row is reported as ReasonSeq at its own seq; a row missing before the window
// is reported too, since the window's first link cannot be checked without it. When the
// window's first entry fails only its HMAC, and the row after it links to it and fails its
// HMAC too, while the row before it (if any) passes, the error also wraps ErrWrongSecret:
// a tampered chain starts failing later than its first row.
//
// Rows deleted from the end of the chain cannot be detected from the file alone: compare
// Stats' LastSeq and LastHMACHash with the last export or anchor.
//
// The report is returned with the error too, and says how many entries passed.
func (s *Store) Verify(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	from, to, err := window(ctx, tx, o.From, o.To)
	if err != nil {
		return nil, err
	}
	report := &VerifyReport{From: from, To: to, HMACsChecked: s.secret != nil, Full: o.Full}
	if to == 0 {
		return report, nil
	}
	bridge, err := s.readBridge(ctx, tx)
	if err != nil {
		return report, err
	}
	imports := newImportCheck(bridge, from, s.secret)
	report.Import = imports.Report()
	total := to - from + 1
	if !o.Full {
		total = min(total, 2) // the window's first and last entries
	}
	progress := newProgress(o.Progress, total)
	if o.Full {
		report.Checked, err = s.full(ctx, tx, from, to, bridge, imports, o, progress)
	} else {
		err = s.smoke(ctx, tx, from, to, report, imports)
	}
	report.account(err)
	if err != nil {
		return report, s.explain(ctx, tx, from, err)
	}
	progress.done(report.Checked)
	return report, nil
}

// account sets Passed, for a full verification, and NotChecked, given Verify's failure.
func (r *VerifyReport) account(err error) {
	if r.Full && r.Checked > 0 {
		r.Passed = []SeqRange{{r.From, r.From + r.Checked - 1}}
	}
	r.NotChecked = r.To - r.From + 1 - r.Checked
	var ee *protocol.EntryError
	if errors.As(err, &ee) && ee.Seq >= r.From && ee.Seq <= r.To {
		r.NotChecked-- // the entry that failed was looked at
	}
}

// full checks every row of the window, in one pass, or in ranges (see verifyRanges) when
// o.Ranges asks for several. Only the first range runs the import check of
// the entries imported behind a bridge record, which follows the legacy chain row by
// row: it holds every imported entry of the window, and the other ranges start after.
func (s *Store) full(ctx context.Context, tx *sql.Tx, from, to int64, bridge *protocol.Bridge,
	imports importCheck, o VerifyOptions, p *progress) (int64, error) {
	lo := from // where the rows that may be checked apart from the import check begin
	if bridge != nil && bridge.LastSeq >= from {
		lo = min(bridge.LastSeq+1, to)
	}
	if n := rangesFor(o); n > 1 {
		return s.verifyRanges(ctx, tx, from, to, splitRanges(from, lo, to, n), imports, o.ThroughSQL, p.fn)
	}
	var checked int64
	l := newLinker(from)
	err := s.scan(ctx, tx, l.lo(), to, o.ThroughSQL, func(r *row) error {
		if err := l.check(r); err != nil {
			return err
		}
		if r.e.Seq >= from {
			if err := imports.check(r); err != nil {
				return err
			}
			checked++
			p.set(checked)
		}
		return nil
	})
	if err == nil {
		err = l.finish(to)
	}
	return checked, err
}

// smoke checks the window's first and last entries, each with the link to its predecessor.
func (s *Store) smoke(ctx context.Context, tx *sql.Tx, from, to int64, report *VerifyReport, imports importCheck) error {
	c := protocol.NewEntryChecker(s.newMAC())
	ends := []int64{from, to}
	if from == to {
		ends = ends[:1]
	}
	for _, seq := range ends {
		l := newLinker(seq)
		rows, err := readRows(ctx, tx, l.lo(), seq)
		if err != nil {
			return err
		}
		for i := range rows {
			r := &row{e: rows[i]}
			r.kind, r.err = c.Check(&r.e)
			if err := l.check(r); err != nil {
				return err
			}
			if r.e.Seq == seq {
				if err := imports.place(r); err != nil {
					return err
				}
			}
		}
		if err := l.finish(seq); err != nil {
			return err
		}
		report.Checked++
		report.Passed = append(report.Passed, SeqRange{seq, seq})
	}
	return nil
}

// explain adds ErrWrongSecret to err when it is an HMAC failure of the window's first
// entry that looks like the wrong secret rather than tampering: the row before it (if any)
// passes its HMAC, and the row after it (if any) links to it and fails its HMAC too.
func (s *Store) explain(ctx context.Context, tx *sql.Tx, from int64, err error) error {
	var ee *protocol.EntryError
	if !errors.As(err, &ee) || ee.Reason != protocol.ReasonHMAC || ee.Seq != from {
		return err
	}
	rows, rerr := readRows(ctx, tx, max(from-1, 1), from+1)
	if rerr != nil {
		return err
	}
	hmacOK := func(e *protocol.Entry) bool {
		return hmac.Equal([]byte(protocol.EntryHMAC(s.secret, e.PrevHash, e.CanonicalHash)), []byte(e.HMACHash))
	}
	var first *protocol.Entry
	for i := range rows {
		switch e := &rows[i]; {
		case e.Seq == from:
			first = e
		case e.Seq < from && hmacOK(e):
			return err // the secret verifies the row before: the first row was tampered with
		case e.Seq > from && first != nil && (e.PrevHash != first.HMACHash || hmacOK(e)):
			return err // the next row disagrees: tampering
		}
	}
	return fmt.Errorf("%w: %w", ErrWrongSecret, err)
}

// window resolves From and To: 0 means the chain's first seq (1) and last seq. It returns
// 0, 0 for an empty chain when neither was given.
func window(ctx context.Context, tx *sql.Tx, from, to int64) (int64, int64, error) {
	if from < 0 || to < 0 {
		return 0, 0, fmt.Errorf("window %d-%d: seq starts at 1", from, to)
	}
	last, err := lastSeq(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	if last == 0 && from == 0 && to == 0 {
		return 0, 0, nil
	}
	if from == 0 {
		from = 1
	}
	if to == 0 {
		to = last
	}
	switch {
	case from > to:
		return 0, 0, fmt.Errorf("window %d-%d is empty", from, to)
	case to > last:
		return 0, 0, fmt.Errorf("window %d-%d ends after the chain's last seq, %d", from, to, last)
	}
	return from, to, nil
}

// progress calls a Progress callback at most ten times a second.
type progress struct {
	fn    func(done, total int64)
	total int64
	next  time.Time
	n     int64 // calls to set since the clock was last read
}

func newProgress(fn func(done, total int64), total int64) *progress {
	return &progress{fn: fn, total: total, next: time.Now().Add(100 * time.Millisecond)}
}

func (p *progress) set(done int64) {
	if p.fn == nil {
		return
	}
	if p.n++; p.n < 1024 {
		return // reading the clock for every row would cost more than the rest
	}
	p.n = 0
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(100 * time.Millisecond)
		p.fn(done, p.total)
	}
}

func (p *progress) done(done int64) {
	if p.fn != nil {
		p.fn(done, p.total)
	}
}
