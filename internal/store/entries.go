package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotFound is returned by Entry when the chain has no entry with the seq asked for.
var ErrNotFound = errors.New("no such entry in the chain")

// Entries reads a page of the chain: the entries with seq offset+1 through offset+limit,
// in seq order, and total, the chain's last seq, both from one snapshot. seq starts at 1
// and has no gaps (Verify checks that none is missing), so total is also the number of
// entries, and the pages of an unbroken chain hold exactly limit entries until the last;
// total is read in constant time, where counting the rows would read the whole table (see
// Stats). A page past the end is empty.
//
// The entries are read as stored, unchecked: verify the chain to trust them. offset and
// limit must not be negative.
func (s *Store) Entries(ctx context.Context, offset, limit int) ([]protocol.Entry, int64, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("read entries: offset %d and limit %d must not be negative", offset, limit)
	}
	if limit == 0 {
		total, err := s.LastSeq(ctx)
		return []protocol.Entry{}, total, err
	}
	lo := int64(offset) + 1
	hi := lo + int64(limit) - 1
	if hi < lo { // past the largest seq
		hi = math.MaxInt64
	}
	entries, total, err := s.readPage(ctx, lo, hi)
	if err != nil || len(entries) > 0 {
		return entries, total, err
	}
	total, err = s.LastSeq(ctx) // an empty page has no row to carry it
	return []protocol.Entry{}, total, err
}

// selectPage is selectPacked with the chain's last seq on every row: one statement, so one
// snapshot and no transaction to begin and end, which a page of GET /api/chain would
// otherwise spend a fifth of its time on.
var selectPage = `SELECT (SELECT max(seq) FROM chain), ` + strings.TrimPrefix(selectPacked, "SELECT ")

// readPage reads rows lo..hi in seq order, unchecked, and the chain's last seq, through
// selectPage. A page with a row that does not unpack is read again column by column.
func (s *Store) readPage(ctx context.Context, lo, hi int64) ([]protocol.Entry, int64, error) {
	st, err := s.prepared(ctx, selectPage)
	if err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	rows, err := st.QueryContext(ctx, lo, hi)
	if err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := make([]protocol.Entry, 0, min(hi-lo+1, 1024))
	var total int64
	var packed string
	ambiguous := false // a row that does not unpack
	for rows.Next() {
		if err := rows.Scan(&total, &packed); err != nil {
			return nil, 0, fmt.Errorf("read chain: %w", err)
		}
		out = append(out, protocol.Entry{})
		if body, ok := unpack(&out[len(out)-1], packed); ok {
			out[len(out)-1].CanonicalBody = []byte(body)
		} else {
			ambiguous = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read chain: %w", err)
	}
	if ambiguous {
		return s.readPageSlowly(ctx, lo, hi)
	}
	return out, total, nil
}

// readPageSlowly is readPage column by column, in one read transaction, for a page with a
// row that does not unpack.
func (s *Store) readPageSlowly(ctx context.Context, lo, hi int64) ([]protocol.Entry, int64, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	total, err := lastSeq(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	out, err := readRows(ctx, tx, lo, hi)
	return out, total, err
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
