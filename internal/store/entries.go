package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotFound is returned by Entry when the chain has no entry with the seq asked for.
var ErrNotFound = errors.New("no such entry in the chain")

// Entries reads a page of the chain in one read transaction: the entries with seq
// offset+1 through offset+limit, in seq order, and total, the chain's last seq. seq starts
// at 1 and has no gaps (Verify checks that none is missing), so total is also the number
// of entries, and the pages of an unbroken chain hold exactly limit entries until the last;
// total is read in constant time, where counting the rows would read the whole table (see
// Stats). A page past the end is empty.
//
// The entries are read as stored, unchecked: verify the chain to trust them. offset and
// limit must not be negative.
func (s *Store) Entries(ctx context.Context, offset, limit int) ([]protocol.Entry, int64, error) {
	if offset < 0 || limit < 0 {
		return nil, 0, fmt.Errorf("read entries: offset %d and limit %d must not be negative", offset, limit)
	}
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	total, err := lastSeq(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	if int64(offset) >= total || limit == 0 {
		return []protocol.Entry{}, total, nil
	}
	hi := total // written so that offset+limit cannot overflow
	if rest := total - int64(offset); int64(limit) < rest {
		hi = int64(offset) + int64(limit)
	}
	entries, err := readPage(ctx, tx, int64(offset)+1, hi)
	if err != nil {
		return nil, 0, err
	}
	return entries, total, nil
}

// readPage reads rows lo..hi in seq order, unchecked, like readRows but through
// selectPacked, which reads a row in about half the time (see read.go). A row that does
// not unpack is read again with readRow.
func readPage(ctx context.Context, tx *sql.Tx, lo, hi int64) ([]protocol.Entry, error) {
	rows, err := tx.QueryContext(ctx, selectPacked, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("read chain: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := make([]protocol.Entry, 0, hi-lo+1) // no more than limit, nor than the chain holds
	var packed string
	for rows.Next() {
		if err := rows.Scan(&packed); err != nil {
			return nil, fmt.Errorf("read chain: %w", err)
		}
		out = append(out, protocol.Entry{})
		e := &out[len(out)-1]
		if body, ok := unpack(e, packed); ok {
			e.CanonicalBody = []byte(body)
		} else if err := readRow(ctx, tx, e); err != nil {
			return nil, fmt.Errorf("read chain: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chain: %w", err)
	}
	return out, nil
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
