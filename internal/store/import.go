package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotEmpty is returned by Import into a chain that already has entries.
var ErrNotEmpty = errors.New("the chain already has entries")

// Import begins an empty chain with rows imported from another product (BIJOTEL): the
// bridge record b, sealed at seq 1 with the time at, then every entry rows yields, in
// order, at seqs b.FirstSeq..b.LastSeq. Each yielded entry carries its columns, its body
// byte for byte and its canonical_hash; Import sets its seq, prev_hash and hmac_hash, and
// checks it with protocol.CheckEntryBody. rows must not keep an entry after yielding it.
//
// Everything happens in one transaction begun with BEGIN IMMEDIATE, which commits only
// when the entries yielded are exactly b.LegacyRows and their protocol.ImportDigest is
// b.LegacyRowsSHA256: a chain is imported whole or not at all. Import fails with
// ErrNotEmpty when the chain has entries. It returns the bridge entry.
func (s *Store) Import(ctx context.Context, b *protocol.Bridge, at time.Time, rows func(yield func(*protocol.Entry) error) error) (*protocol.Entry, error) {
	if s.secret == nil {
		return nil, ErrNoSecret
	}
	sealer, err := protocol.NewEntrySealer(s.secret)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	bridge, err := sealer.Seal(1, protocol.GenesisPrevHash, b.Body(at))
	if err == nil {
		err = protocol.CheckEntry(bridge, nil)
	}
	if err == nil {
		_, err = protocol.ParseBridge(bridge)
	}
	if err != nil {
		return nil, fmt.Errorf("import: bridge record: %w", err)
	}
	tx, err := s.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see openDB's txlock
	if err != nil {
		return nil, fmt.Errorf("import: begin: %w", err)
	}
	if err := s.importTx(ctx, tx, b, bridge, sealer, rows); err != nil {
		return nil, errors.Join(fmt.Errorf("import: %w", err), rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("import: commit: %w", err)
	}
	return bridge, nil
}

// importTx inserts the bridge and the imported entries in tx, insertRows at a time.
func (s *Store) importTx(ctx context.Context, tx *sql.Tx, b *protocol.Bridge, bridge *protocol.Entry,
	sealer *protocol.EntrySealer, rows func(yield func(*protocol.Entry) error) error) error {
	last, err := lastSeq(ctx, tx)
	if err != nil {
		return err
	}
	if last != 0 {
		return fmt.Errorf("%w (%d): import into a new chain file", ErrNotEmpty, last)
	}
	ins := &inserter{tx: tx}
	if err := ins.add(ctx, bridge); err != nil {
		return err
	}
	digest := protocol.NewImportDigest()
	seq, prev := bridge.Seq, bridge.HMACHash
	err = rows(func(e *protocol.Entry) error {
		seq++
		if !b.Holds(seq) {
			return fmt.Errorf("more rows than the bridge record's %d", b.LegacyRows)
		}
		sealer.Link(e, seq, prev)
		if err := protocol.CheckEntry(e, nil); err != nil {
			return fmt.Errorf("legacy seq %d: %w", b.LegacySeq(seq), err)
		}
		digest.Add(b.LegacySeq(seq), e)
		prev = e.HMACHash
		return ins.add(ctx, e)
	})
	if err != nil {
		return err
	}
	switch {
	case seq != b.LastSeq:
		return fmt.Errorf("%d rows, the bridge record says %d", seq-bridge.Seq, b.LegacyRows)
	case digest.Sum() != b.LegacyRowsSHA256:
		return errors.New("the rows are not those the bridge record's legacy_rows_sha256 binds")
	}
	return ins.flush(ctx)
}

// inserter inserts entries in tx insertRows at a time.
type inserter struct {
	tx   *sql.Tx
	full *sql.Stmt // the INSERT of insertRows rows, prepared once
	args []any
}

// add queues e, and inserts the queue when it is full. e's values are copied.
func (in *inserter) add(ctx context.Context, e *protocol.Entry) error {
	ts, err := strconv.ParseInt(e.TimestampNS, 10, 64)
	if err != nil {
		return fmt.Errorf("entry seq %d: timestamp_ns: %w", e.Seq, err)
	}
	in.args = append(in.args, e.Seq, ts, e.TraceID, e.SpanID, e.SpanName, e.SpanKind,
		append([]byte(nil), e.CanonicalBody...), e.CanonicalHash, e.PrevHash, e.HMACHash)
	if len(in.args) < insertRows*10 {
		return nil
	}
	if in.full == nil {
		if in.full, err = in.tx.PrepareContext(ctx, insertSQL(insertRows)); err != nil {
			return fmt.Errorf("prepare insert: %w", err)
		}
	}
	if _, err := in.full.ExecContext(ctx, in.args...); err != nil {
		return fmt.Errorf("insert entries up to seq %d: %w", e.Seq, err)
	}
	in.args = in.args[:0]
	return nil
}

// flush inserts what is queued.
func (in *inserter) flush(ctx context.Context) error {
	if len(in.args) == 0 {
		return nil
	}
	if _, err := in.tx.ExecContext(ctx, insertSQL(len(in.args)/10), in.args...); err != nil {
		return fmt.Errorf("insert entries: %w", err)
	}
	in.args = in.args[:0]
	return nil
}
