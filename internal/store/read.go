package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file reads rows for Verify and Export: one goroutine streams them from SQLite in
// batches, workers on every core check each row on its own with protocol.CheckEntry, and
// the caller's goroutine gets the rows back in seq order, with their verdicts, to check
// what needs the previous row (seq, prev_hash) and to write them out.

// A batch is the rows that travel together between the reader, the workers and the caller:
// at most batchRows rows, and as many as fit in batchBytes of bodies (but at least one).
// Large enough that channel operations cost nothing per row; small enough that the
// batches in flight (see scan) hold a few megabytes whatever the size of the bodies.
const (
	batchRows  = 512
	batchBytes = 1 << 20
)

// selectRows selects the rows lo <= seq <= hi in seq order.
const selectRows = `SELECT ` + columns + ` FROM chain WHERE seq BETWEEN ? AND ? ORDER BY seq`

// selectPacked selects the same rows as selectRows as one text each: the nine other
// columns and then the body, joined by packSep. Each column costs the driver three calls
// into SQLite, each taking the connection's mutex, and an allocation: that was most of
// the time spent reading, and one column instead of ten reads a row in about half the
// time (see docs/BENCHMARKS.md).
//
// The text splits back into its columns without ambiguity when it holds exactly nine
// separators, as then no column contains one (a canonical body never does: JSON escapes
// control characters). Any other row (a span name containing U+001F, a tampered column)
// is read again with selectRows.
const selectPacked = `SELECT concat_ws(char(31), seq, timestamp_ns, trace_id, span_id, span_name, ` +
	`span_kind, canonical_hash, prev_hash, hmac_hash, canonical_body) FROM chain WHERE seq BETWEEN ? AND ? ORDER BY seq`

// packSep separates the columns in selectPacked's text.
const packSep = "\x1f"

// packedColumns is how many columns selectPacked joins.
const packedColumns = 10

// row is an entry as read and protocol.CheckEntryBody's verdict on it.
type row struct {
	e    protocol.Entry
	kind protocol.BodyKind
	err  error
}

type batch struct {
	rows   []row
	bodies []byte        // the rows' canonical bodies, one after the other
	done   chan struct{} // closed when every row's err is set
}

// pipeline joins the reader, the workers and the caller.
type pipeline struct {
	work    chan *batch // to the workers
	ordered chan *batch // to the caller, in seq order
	free    chan *batch // from the caller, done with: the reader reuses them
}

// newBatch returns an empty batch, reusing one the caller is done with if it can: a
// verification allocates little besides the rows' own values, so the garbage collector
// runs less often.
func (p *pipeline) newBatch() *batch {
	select {
	case b := <-p.free:
		clear(b.rows)
		b.rows, b.bodies, b.done = b.rows[:0], b.bodies[:0], make(chan struct{})
		return b
	default:
		return &batch{rows: make([]row, 0, batchRows), bodies: make([]byte, 0, batchBytes), done: make(chan struct{})}
	}
}

// scan reads rows lo..hi of tx in seq order (openRows), checks each with protocol.CheckEntry (with
// the HMAC when the store has the secret) on all cores, and calls each for every row in
// seq order. It stops at the first error each returns, and returns it. each must not keep
// a row after it returns.
func (s *Store) scan(ctx context.Context, tx *sql.Tx, lo, hi int64, throughSQL bool, each func(*row) error) error {
	src, err := s.openRows(ctx, tx, lo, hi, throughSQL)
	if err != nil {
		return fmt.Errorf("read chain: %w", err)
	}
	defer src.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	inFlight := 2 * workers // batches queued for the caller; one more per worker and the reader's
	p := &pipeline{
		work:    make(chan *batch, workers),
		ordered: make(chan *batch, inFlight),
		free:    make(chan *batch, inFlight+workers+2),
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			c := protocol.NewEntryChecker(s.newMAC())
			for b := range p.work {
				for i := range b.rows {
					if ctx.Err() != nil {
						break // the caller has stopped reading
					}
					b.rows[i].kind, b.rows[i].err = c.Check(&b.rows[i].e)
				}
				close(b.done)
			}
		})
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(p.ordered)
		defer close(p.work)
		readErr <- p.read(ctx, src)
	}()

	var failed error
	for b := range p.ordered {
		if failed != nil {
			continue // drain, so that the reader can finish
		}
		<-b.done
		if failed = ctx.Err(); failed != nil {
			continue // the workers may have skipped rows of b
		}
		for i := range b.rows {
			if failed = each(&b.rows[i]); failed != nil {
				cancel()
				break
			}
		}
		select {
		case p.free <- b:
		default:
		}
	}
	wg.Wait()
	if err := <-readErr; failed == nil && err != nil {
		return fmt.Errorf("read chain: %w", err)
	}
	return failed
}

// read reads src's rows into batches and hands each to the workers, then to the caller.
func (p *pipeline) read(ctx context.Context, src rowSource) error {
	b := p.newBatch()
	send := func() error {
		for _, ch := range []chan<- *batch{p.work, p.ordered} { // work first: ordered waits on it
			select {
			case ch <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b = p.newBatch()
		return nil
	}
	var e protocol.Entry
	for {
		if len(b.rows) == batchRows || len(b.bodies) >= batchBytes {
			if err := send(); err != nil {
				return err
			}
		}
		// The body is copied into the batch's buffer, which is reused with the batch. A
		// body that makes it grow leaves the earlier ones where they were, still read.
		var ok bool
		var err error
		if b.bodies, ok, err = src.next(&e, b.bodies); err != nil {
			return err
		}
		if !ok {
			break
		}
		b.rows = append(b.rows, row{e: e})
	}
	if len(b.rows) > 0 {
		return send()
	}
	return nil
}

// unpack sets e's columns but the body from selectPacked's text, and returns the body. It
// returns false, with at most e.Seq set, when the text does not split into exactly
// packedColumns columns.
func unpack(e *protocol.Entry, packed string) (body string, ok bool) {
	var f [packedColumns]string
	if !splitPacked(packed, f[:]) {
		seq, _, _ := strings.Cut(packed, packSep)
		e.Seq, _ = strconv.ParseInt(seq, 10, 64)
		return "", false
	}
	var err error
	if e.Seq, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return "", false
	}
	// timestamp_ns is an INTEGER column (the table is STRICT): SQLite writes it in decimal.
	e.TimestampNS, e.TraceID, e.SpanID, e.SpanName, e.SpanKind = f[1], f[2], f[3], f[4], f[5]
	e.CanonicalHash, e.PrevHash, e.HMACHash = f[6], f[7], f[8]
	return f[9], true
}

// splitPacked splits a packed text into f, one column each, and reports whether it held
// exactly len(f) columns.
func splitPacked(packed string, f []string) bool {
	if strings.Count(packed, packSep) != len(f)-1 {
		return false
	}
	for i := range len(f) - 1 {
		f[i], packed, _ = strings.Cut(packed, packSep)
	}
	f[len(f)-1] = packed
	return true
}

// readRow reads row e.Seq again, column by column.
func readRow(ctx context.Context, tx *sql.Tx, e *protocol.Entry) error {
	rows, err := readRows(ctx, tx, e.Seq, e.Seq)
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("row %d vanished while it was read", e.Seq)
	}
	*e = rows[0]
	return nil
}

// scanEntry scans a row selected with columns into e. The strings are the driver's own
// copies, so nothing is copied twice.
func scanEntry(rows *sql.Rows, e *protocol.Entry) error {
	var ts int64
	if err := rows.Scan(&e.Seq, &ts, &e.TraceID, &e.SpanID, &e.SpanName, &e.SpanKind,
		&e.CanonicalBody, &e.CanonicalHash, &e.PrevHash, &e.HMACHash); err != nil {
		return err
	}
	e.TimestampNS = strconv.FormatInt(ts, 10)
	return nil
}

// readRows reads rows lo..hi in seq order, unchecked.
func readRows(ctx context.Context, tx *sql.Tx, lo, hi int64) ([]protocol.Entry, error) {
	rows, err := tx.QueryContext(ctx, selectRows, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("read chain: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []protocol.Entry
	for rows.Next() {
		out = append(out, protocol.Entry{})
		if err := scanEntry(rows, &out[len(out)-1]); err != nil {
			return nil, fmt.Errorf("read chain: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chain: %w", err)
	}
	return out, nil
}

// newMAC returns HMAC-SHA256 keyed with the secret, or nil without one.
func (s *Store) newMAC() hash.Hash {
	if s.secret == nil {
		return nil
	}
	return hmac.New(sha256.New, s.secret)
}

// linker checks, in seq order, what protocol.CheckEntry leaves to its caller: that no
// row is missing and that each prev_hash is the previous row's hmac_hash. It reports the
// first failure the way protocol.VerifyExport orders its checks: seq, shape, link, then
// CheckEntry's other verdicts.
type linker struct {
	from     int64  // the window's first seq; the row before it is read for its hmac_hash
	next     int64  // the seq expected next
	prevHMAC string // hmac_hash of row next-1
}

func newLinker(from int64) *linker {
	if from == 1 {
		return &linker{from: 1, next: 1, prevHMAC: protocol.GenesisPrevHash}
	}
	return &linker{from: from, next: from - 1}
}

// lo is the first seq to read: the window's predecessor, if it has one.
func (l *linker) lo() int64 { return l.next }

// check takes the next row read and its CheckEntry verdict. It returns nil for the row
// before the window, which is read for its hmac_hash alone.
func (l *linker) check(r *row) error {
	e := &r.e
	if e.Seq != l.next {
		return missing(l.next, strconv.FormatInt(e.Seq, 10))
	}
	l.next++
	if e.Seq < l.from {
		l.prevHMAC = e.HMACHash
		return nil
	}
	if r.err != nil { // errors.As would allocate for every row
		if ee := (*protocol.EntryError)(nil); errors.As(r.err, &ee) && ee.Reason == protocol.ReasonMalformed {
			return r.err
		}
	}
	if e.PrevHash != l.prevHMAC {
		return &protocol.EntryError{Seq: e.Seq, Reason: protocol.ReasonLink,
			Err: &protocol.MismatchError{Field: "prev_hash", Want: l.prevHMAC, Got: e.PrevHash}}
	}
	if r.err != nil {
		return r.err
	}
	l.prevHMAC = e.HMACHash
	return nil
}

// finish checks that the rows read reached to.
func (l *linker) finish(to int64) error {
	if l.next <= to {
		return missing(l.next, "the end of the rows read")
	}
	return nil
}

// missing reports that row seq is not in the chain.
func missing(seq int64, found string) error {
	return &protocol.EntryError{Seq: seq, Reason: protocol.ReasonSeq, Err: &protocol.MismatchError{
		Field: "seq", Want: strconv.FormatInt(seq, 10), Got: found}}
}
