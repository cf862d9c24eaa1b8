package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/sqlitefile"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is where a full verification and an export read the chain's rows: straight
// from the database file's pages (internal/sqlitefile), which costs a fraction of a read
// through SQLite's engine, or through SQL (selectPacked) when the file cannot be read that
// way. The pages are read inside the caller's read transaction, which keeps SQLite's
// checkpointer from changing under the read the pages it takes from the database file; a
// page read from the write-ahead log is the last committed version, so a row changed by
// SQL and not yet checkpointed is read as changed. Whatever the pages reader cannot read
// (an unexpected record, a page that does not parse, a log restarted under it) is read
// through SQL, from that row on: what SQLite makes of the file is then the verdict, as
// before.

// rowSource yields the chain's rows of a range in seq order.
type rowSource interface {
	// next reads the next row into e, appends its canonical body to dst and points
	// e.CanonicalBody at that copy; it returns dst extended, and false at the end.
	next(e *protocol.Entry, dst []byte) ([]byte, bool, error)
	close()
}

// openRows returns the rows lo..hi of tx's snapshot: from the file's pages unless
// throughSQL, or when the file cannot be read so.
func (s *Store) openRows(ctx context.Context, tx *sql.Tx, lo, hi int64, throughSQL bool) (rowSource, error) {
	if !throughSQL {
		if r := s.openFileRows(ctx, tx, lo, hi); r != nil {
			return r, nil
		}
	}
	return openSQLRows(ctx, tx, lo, hi)
}

// sqlRows reads rows through SQL, as one packed text each.
type sqlRows struct {
	ctx    context.Context
	tx     *sql.Tx
	rows   *sql.Rows
	packed string
}

func openSQLRows(ctx context.Context, tx *sql.Tx, lo, hi int64) (*sqlRows, error) {
	rows, err := tx.QueryContext(ctx, selectPacked, lo, hi)
	if err != nil {
		return nil, err
	}
	return &sqlRows{ctx: ctx, tx: tx, rows: rows}, nil
}

func (r *sqlRows) next(e *protocol.Entry, dst []byte) ([]byte, bool, error) {
	if !r.rows.Next() {
		return dst, false, r.rows.Err()
	}
	if err := r.rows.Scan(&r.packed); err != nil {
		return dst, false, err
	}
	*e = protocol.Entry{}
	body, ok := unpack(e, r.packed) // else e.Seq is set
	return withBody(r.ctx, r.tx, e, dst, body, ok)
}

// withBody appends row e's canonical body to dst and points e.CanonicalBody at it: body
// when decoded, else the body of row e.Seq read again through SQL, with its columns.
func withBody[B string | []byte](ctx context.Context, tx *sql.Tx, e *protocol.Entry, dst []byte, body B, decoded bool) ([]byte, bool, error) {
	start := len(dst)
	if decoded {
		dst = append(dst, body...)
	} else {
		if err := readRow(ctx, tx, e); err != nil {
			return dst, false, err
		}
		dst = append(dst, e.CanonicalBody...)
	}
	e.CanonicalBody = dst[start:len(dst):len(dst)]
	return dst, true, nil
}

func (r *sqlRows) close() { _ = r.rows.Close() }

// chainColumns is how many columns a record of the chain table holds (schema's order).
const chainColumns = 10

// fileRows reads rows from the database file's pages.
type fileRows struct {
	ctx     context.Context
	tx      *sql.Tx
	file    *sqlitefile.File
	cursor  *sqlitefile.Cursor
	from    int64 // the seq after the last row read
	hi      int64
	cols    [chainColumns]sqlitefile.Value
	digits  []byte
	through *sqlRows // the rest, through SQL, after the pages reader stopped on an error
}

// openFileRows returns the rows lo..hi read from the file's pages, or nil when the file
// cannot be read so (not a file on disk, an encoding other than UTF-8, ...).
func (s *Store) openFileRows(ctx context.Context, tx *sql.Tx, lo, hi int64) *fileRows {
	var root uint32
	// Also what starts tx's read, if nothing has yet: the pages are read inside it.
	err := tx.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'chain'`).Scan(&root)
	if err != nil {
		return nil
	}
	f, err := sqlitefile.Open(s.path)
	if err != nil {
		return nil
	}
	c, err := f.Seek(root, lo)
	if err != nil {
		_ = f.Close()
		return nil
	}
	return &fileRows{ctx: ctx, tx: tx, file: f, cursor: c, from: lo, hi: hi}
}

func (r *fileRows) next(e *protocol.Entry, dst []byte) ([]byte, bool, error) {
	if r.through != nil {
		return r.through.next(e, dst)
	}
	if !r.cursor.Next() {
		if r.cursor.Err() == nil {
			return dst, false, nil
		}
		var err error
		if r.through, err = openSQLRows(r.ctx, r.tx, r.from, r.hi); err != nil {
			return dst, false, err
		}
		return r.through.next(e, dst)
	}
	seq := r.cursor.Rowid()
	if seq > r.hi {
		return dst, false, nil
	}
	r.from = seq + 1
	body, ok := r.decode(e, seq)
	if !ok {
		*e = protocol.Entry{Seq: seq}
	}
	return withBody(r.ctx, r.tx, e, dst, body, ok)
}

// textColumns are the chain's TEXT columns, by their index in a record.
var textColumns = [...]int{2, 3, 4, 5, 7, 8, 9}

// decode sets e's columns but the body from the cursor's record, and returns the body;
// false when the record is not of the schema's types (read through SQL instead). The
// columns share one string, as selectPacked's do.
func (r *fileRows) decode(e *protocol.Entry, seq int64) ([]byte, bool) {
	n, err := sqlitefile.Record(r.cursor.Payload(), r.cols[:])
	c := &r.cols
	if err != nil || n != chainColumns || c[1].Kind != sqlitefile.Integer ||
		(c[6].Kind != sqlitefile.Blob && c[6].Kind != sqlitefile.Text) {
		return nil, false
	}
	size := 20
	for _, i := range textColumns {
		if c[i].Kind != sqlitefile.Text {
			return nil, false
		}
		size += len(c[i].Bytes)
	}
	var b strings.Builder
	b.Grow(size)
	r.digits = strconv.AppendInt(r.digits[:0], c[1].Int, 10)
	_, _ = b.Write(r.digits)
	for _, i := range textColumns {
		_, _ = b.Write(c[i].Bytes)
	}
	s := b.String()
	at := len(r.digits)
	field := func(i int) string {
		f := s[at : at+len(c[i].Bytes)]
		at += len(f)
		return f
	}
	*e = protocol.Entry{Seq: seq, TimestampNS: s[:at]}
	e.TraceID, e.SpanID, e.SpanName, e.SpanKind = field(2), field(3), field(4), field(5)
	e.CanonicalHash, e.PrevHash, e.HMACHash = field(7), field(8), field(9)
	return c[6].Bytes, true
}

func (r *fileRows) close() {
	if r.through != nil {
		r.through.close()
	}
	_ = r.file.Close()
}
