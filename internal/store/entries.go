package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotFound is returned by Entry when the chain has no entry with the seq asked for.
var ErrNotFound = errors.New("no such entry in the chain")

// Summary is a chain entry without its body, as a page of the chain gives it: its columns,
// its hashes and the size of its body. A body can be as large as a prompt, a summary
// cannot, so a page of them stays small and cheap to read; Entry gives the body.
type Summary struct {
	Seq           int64
	TimestampNS   string // decimal nanoseconds, as protocol.Entry has it
	TraceID       string
	SpanID        string
	SpanName      string
	SpanKind      string
	BodyBytes     int64 // length of the canonical body in bytes
	CanonicalHash string
	PrevHash      string
	HMACHash      string
}

// Summaries reads a page of the chain: the summaries of the entries with seq offset+1
// through offset+limit, in seq order, and total, the chain's last seq, both from one
// snapshot. seq starts at 1 and has no gaps (Verify checks that none is missing), so total
// is also the number of entries, and the pages of an unbroken chain hold exactly limit
// entries until the last; total is read in constant time, where counting the rows would
// read the whole table (see Stats). A page past the end is empty.
//
// The entries are read as stored, unchecked: verify the chain to trust them. offset and
// limit must not be negative.
func (s *Store) Summaries(ctx context.Context, offset, limit int) ([]Summary, int64, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("read entries: offset %d and limit %d must not be negative", offset, limit)
	}
	if limit == 0 {
		total, err := s.LastSeq(ctx)
		return []Summary{}, total, err
	}
	lo := int64(offset) + 1
	hi := lo + int64(limit) - 1
	if hi < lo { // past the largest seq
		hi = math.MaxInt64
	}
	page, total, err := s.readSummaries(ctx, lo, hi)
	if err != nil || len(page) > 0 {
		return page, total, err
	}
	total, err = s.LastSeq(ctx) // an empty page has no row to carry it
	return []Summary{}, total, err
}

// summaryColumns are a Summary's columns, in its order. octet_length reads the body's
// size from the row's header, not the body.
const summaryColumns = `seq, timestamp_ns, trace_id, span_id, span_name, span_kind, ` +
	`octet_length(canonical_body), canonical_hash, prev_hash, hmac_hash`

// selectSummaries selects rows lo..hi in seq order as summaries packed into one text the
// way selectPacked packs entries, with the chain's last seq on every row: one statement,
// so one snapshot and no transaction to begin and end, which a page of GET /api/chain
// would otherwise spend a fifth of its time on.
const selectSummaries = `SELECT (SELECT max(seq) FROM chain), concat_ws(char(31), ` + summaryColumns +
	`) FROM chain WHERE seq BETWEEN ? AND ? ORDER BY seq`

// selectSummaryRows selects the same summaries column by column.
const selectSummaryRows = `SELECT ` + summaryColumns + ` FROM chain WHERE seq BETWEEN ? AND ? ORDER BY seq`

// readSummaries reads the summaries of rows lo..hi and the chain's last seq through
// selectSummaries. A page with a row that does not unpack is read again column by column.
func (s *Store) readSummaries(ctx context.Context, lo, hi int64) ([]Summary, int64, error) {
	st, err := s.prepared(ctx, selectSummaries)
	if err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	rows, err := st.QueryContext(ctx, lo, hi)
	if err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := make([]Summary, 0, min(hi-lo+1, 1024))
	var total int64
	var packed string
	ambiguous := false // a row that does not unpack
	for rows.Next() {
		if err := rows.Scan(&total, &packed); err != nil {
			return nil, 0, fmt.Errorf("read chain: %w", err)
		}
		out = append(out, Summary{})
		ambiguous = ambiguous || !unpackSummary(&out[len(out)-1], packed)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	if ambiguous {
		return s.readSummariesSlowly(ctx, lo, hi)
	}
	return out, total, nil
}

// unpackSummary sets sum from selectSummaries' text. It returns false when the text does
// not split into exactly the columns it packs.
func unpackSummary(sum *Summary, packed string) bool {
	var f [10]string
	if !splitPacked(packed, f[:]) {
		return false
	}
	var err1, err2 error
	sum.Seq, err1 = strconv.ParseInt(f[0], 10, 64)
	sum.BodyBytes, err2 = strconv.ParseInt(f[6], 10, 64)
	sum.TimestampNS, sum.TraceID, sum.SpanID, sum.SpanName, sum.SpanKind = f[1], f[2], f[3], f[4], f[5]
	sum.CanonicalHash, sum.PrevHash, sum.HMACHash = f[7], f[8], f[9]
	return err1 == nil && err2 == nil
}

// readSummariesSlowly is readSummaries column by column, in one read transaction, for a
// page with a row that does not unpack.
func (s *Store) readSummariesSlowly(ctx context.Context, lo, hi int64) ([]Summary, int64, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	total, err := lastSeq(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, selectSummaryRows, lo, hi)
	if err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Summary
	for rows.Next() {
		var ts int64
		var sum Summary
		if err := rows.Scan(&sum.Seq, &ts, &sum.TraceID, &sum.SpanID, &sum.SpanName, &sum.SpanKind,
			&sum.BodyBytes, &sum.CanonicalHash, &sum.PrevHash, &sum.HMACHash); err != nil {
			return nil, 0, fmt.Errorf("read chain: %w", err)
		}
		sum.TimestampNS = strconv.FormatInt(ts, 10)
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	return out, total, nil
}

// Entry reads the entry with the given seq, as stored and unchecked. It returns an error
// wrapping ErrNotFound when the chain has no such entry.
func (s *Store) Entry(ctx context.Context, seq int64) (*protocol.Entry, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	rows, err := readRows(ctx, tx, seq, seq)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("entry seq %d: %w", seq, ErrNotFound)
	}
	return &rows[0], nil
}

// LastSeq returns the chain's last seq, 0 when it is empty. It reads one row of the index,
// so it takes constant time however long the chain is.
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	return lastSeq(ctx, tx)
}
