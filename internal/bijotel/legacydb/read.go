package legacydb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ColumnError is a row whose column holds what the original never writes: NULL where it
// writes a value, another storage class (a REAL timestamp, a TEXT body), a seq below 1,
// or a trusted prev_hash that is not 64 lowercase hex digits. It wraps
// protocol.ErrMalformed.
type ColumnError struct {
	Seq     int64
	Column  string
	Problem string
}

func (e *ColumnError) Error() string {
	return fmt.Sprintf("malformed row seq=%d: %s %s", e.Seq, e.Column, e.Problem)
}

// Is makes a ColumnError match protocol.ErrMalformed.
func (e *ColumnError) Is(target error) bool { return target == protocol.ErrMalformed }

// Summary describes the whole table; it is zero for an empty table.
type Summary struct {
	Rows             int64
	FirstSeq         int64
	LastSeq          int64
	FirstPrevHash    string // the first row's prev_hash: GENESIS, or the link to an archived prefix
	HeadHMACHash     string // the last row's hmac_hash
	FirstTimestampNS int64
	LastTimestampNS  int64 // of the last row by seq; timestamps are not ordered by seq
}

// HasSemanticColumn reports whether the table has semantic_body_hash (older tables do
// not: their rows read with it NULL).
func (db *DB) HasSemanticColumn() bool { return db.semantic }

// Summary describes the whole table in one read transaction.
func (db *DB) Summary(ctx context.Context) (Summary, error) {
	tx, err := db.readTx(ctx)
	if err != nil {
		return Summary{}, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	return db.summary(ctx, tx)
}

func (db *DB) summary(ctx context.Context, tx *sql.Tx) (Summary, error) {
	s, err := db.bounds(ctx, tx)
	if err != nil || s.Rows == 0 {
		return s, err
	}
	for _, end := range []struct {
		seq        int64
		hashColumn string
		hash       *string
		ts         *int64
	}{{s.FirstSeq, "prev_hash", &s.FirstPrevHash, &s.FirstTimestampNS}, {s.LastSeq, "hmac_hash", &s.HeadHMACHash, &s.LastTimestampNS}} {
		var hash, ts any
		q := `SELECT ` + end.hashColumn + `, timestamp_ns FROM chain WHERE seq = ?`
		if err := tx.QueryRowContext(ctx, q, end.seq).Scan(&hash, &ts); err != nil {
			return Summary{}, db.readErr(err)
		}
		var err error
		if *end.hash, err = text(end.seq, end.hashColumn, hash); err != nil {
			return Summary{}, err
		}
		if *end.ts, err = integer(end.seq, "timestamp_ns", ts); err != nil {
			return Summary{}, err
		}
	}
	return s, nil
}

// bounds reads the table's row count and first and last seq (a Summary with only those).
func (db *DB) bounds(ctx context.Context, tx *sql.Tx) (Summary, error) {
	var s Summary
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), min(seq), max(seq) FROM chain`).Scan(&s.Rows, &first, &last); err != nil {
		return Summary{}, db.readErr(err)
	}
	s.FirstSeq, s.LastSeq = first.Int64, last.Int64
	if s.Rows != 0 && s.FirstSeq < 1 {
		return Summary{}, &ColumnError{Seq: s.FirstSeq, Column: "seq", Problem: "is below 1 (the original's AUTOINCREMENT starts at 1)"}
	}
	return s, nil
}

// Scan calls fn for every row with from <= seq <= to (0: unbounded) in seq order, in one
// read transaction, streaming: only one row is in memory at a time. fn's *bijotel.Row is
// reused between calls: copy what it keeps. A row with a column the original never
// writes stops the scan with a *ColumnError; an error from fn stops it and is returned.
func (db *DB) Scan(ctx context.Context, from, to int64, fn func(*bijotel.Row) error) error {
	tx, err := db.readTx(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	return db.scan(ctx, tx, from, to, fn)
}

// scan is Scan inside tx.
func (db *DB) scan(ctx context.Context, tx *sql.Tx, from, to int64, fn func(*bijotel.Row) error) error {
	if to == 0 {
		to = 1<<63 - 1
	}
	semantic := "semantic_body_hash"
	if !db.semantic {
		semantic = "NULL"
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, timestamp_ns, trace_id, span_id, span_name, span_kind,
		canonical_body, canonical_hash, prev_hash, hmac_hash, `+semantic+`
		FROM chain WHERE seq >= ? AND seq <= ? ORDER BY seq`, from, to)
	if err != nil {
		return db.readErr(err)
	}
	defer func() { _ = rows.Close() }()
	var (
		r     bijotel.Row
		raw   [11]any
		dests [11]any
		kind  string
		sem   string
	)
	for i := range raw {
		dests[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dests[:]...); err != nil {
			return db.readErr(err)
		}
		if err := decodeRow(&r, &raw, &kind, &sem); err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return db.readErr(err)
	}
	return nil
}

// decodeRow sets r from the raw column values of one row, checking that each holds the
// storage class the original writes. kind and sem back r.SpanKind and r.SemanticBodyHash,
// so that r is reused without allocating.
func decodeRow(r *bijotel.Row, raw *[11]any, kind, sem *string) error {
	seq, ok := raw[0].(int64)
	if !ok {
		return &ColumnError{Column: "seq", Problem: "is " + storageClass(raw[0]) + ", want INTEGER"}
	}
	r.Seq = seq
	if seq < 1 {
		return &ColumnError{Seq: seq, Column: "seq", Problem: "is below 1 (the original's AUTOINCREMENT starts at 1)"}
	}
	var err error
	if r.TimestampNS, err = integer(seq, "timestamp_ns", raw[1]); err != nil {
		return err
	}
	for i, dst := range []*string{&r.TraceID, &r.SpanID, &r.SpanName} {
		if *dst, err = text(seq, [...]string{"trace_id", "span_id", "span_name"}[i], raw[2+i]); err != nil {
			return err
		}
	}
	if r.SpanKind, err = nullableText(seq, "span_kind", raw[5], kind); err != nil {
		return err
	}
	body, ok := raw[6].([]byte)
	if !ok {
		return &ColumnError{Seq: seq, Column: "canonical_body", Problem: "is " + storageClass(raw[6]) +
			", want BLOB (the original writes bytes; its verifier cannot hash a TEXT body)"}
	}
	r.CanonicalBody = body // database/sql gave us its own copy
	for i, dst := range []*string{&r.CanonicalHash, &r.PrevHash, &r.HMACHash} {
		if *dst, err = text(seq, [...]string{"canonical_hash", "prev_hash", "hmac_hash"}[i], raw[7+i]); err != nil {
			return err
		}
	}
	r.SemanticBodyHash, err = nullableText(seq, "semantic_body_hash", raw[10], sem)
	return err
}

func integer(seq int64, column string, v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, &ColumnError{Seq: seq, Column: column, Problem: "is " + storageClass(v) + ", want INTEGER"}
	}
	return n, nil
}

func text(seq int64, column string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", &ColumnError{Seq: seq, Column: column, Problem: "is " + storageClass(v) + ", want TEXT"}
	}
	return s, nil
}

// nullableText returns nil for NULL, else the text stored in *buf.
func nullableText(seq int64, column string, v any, buf *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := text(seq, column, v)
	if err != nil {
		return nil, err
	}
	*buf = s
	return buf, nil
}

// storageClass names the SQLite storage class the driver returned v for.
func storageClass(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case int64:
		return "INTEGER"
	case float64:
		return "REAL"
	case string:
		return "TEXT"
	case []byte:
		return "BLOB"
	}
	return fmt.Sprintf("%T", v)
}

// readTx begins a read transaction: every query in it sees one snapshot of the file.
func (db *DB) readTx(ctx context.Context) (*sql.Tx, error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, db.readErr(err)
	}
	return tx, nil
}

// readErr wraps an error of SQLite reading the file.
func (db *DB) readErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("legacydb: read %s: %w", db.path, err)
}
