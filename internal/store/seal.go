package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// insertRows is how many rows one INSERT statement writes, and the size of the chunks
// Seal seals in parallel: fewer statements cost less per row, and 100 rows of 10 columns
// stay far below SQLite's limit on bound parameters.
const insertRows = 100

// Seal appends bodies to the chain as consecutive entries and returns them, in one
// transaction begun with BEGIN IMMEDIATE: it takes SQLite's write lock, reads the last row,
// and inserts the entries after it, so writers in several processes cannot fork the chain.
// Either every body is sealed or none is. The same transaction logs the energy of each
// entry with token counts in energy_log (see energy.go).
//
// The costly part of sealing, canonical JSON and its hash (protocol.NewUnlinkedEntry), runs
// on all cores, chunk by chunk, while the transaction links and inserts the chunks already
// done.
//
// A body that would make an entry the protocol refuses (trace_id not 32 lowercase hex,
// a negative start time, invalid UTF-8, ...) fails the whole call with an error wrapping
// protocol.ErrMalformed and naming the first such body's index.
func (s *Store) Seal(ctx context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error) {
	if s.secret == nil {
		return nil, ErrNoSecret
	}
	return s.SealBatch(ctx, s.Prepare(bodies))
}

// A Batch is bodies being made into entries on all cores; see Prepare.
type Batch struct {
	p      *prepared
	sealed atomic.Bool
}

// Prepare starts the costly part of sealing bodies, their canonical JSON and its hash, on
// all cores, and returns at once; SealBatch seals them. A caller sealing a stream of
// batches prepares the next while the last is written (its commit waits on the disk). A
// Batch is sealed at most once; one that is never sealed finishes its work and is dropped.
// The bodies must not change until SealBatch returns.
func (s *Store) Prepare(bodies []protocol.SpanBody) *Batch {
	return &Batch{p: s.prepare(bodies)}
}

// SealBatch is Seal of the bodies b was prepared from.
func (s *Store) SealBatch(ctx context.Context, b *Batch) ([]*protocol.Entry, error) {
	if err := s.sealBatch(ctx, b, nil); err != nil || len(b.p.entries) == 0 {
		return nil, err
	}
	return b.p.entries, nil
}

// sealBatch seals b: every body when once is nil, else those SealOnce seals, with once
// filled in as SealOnce's report.
func (s *Store) sealBatch(ctx context.Context, b *Batch, once *SealReport) error {
	p := b.p
	defer p.stop.Store(true)
	if b.sealed.Swap(true) {
		return errors.New("seal: the batch was sealed before")
	}
	if s.secret == nil {
		return ErrNoSecret
	}
	if len(p.entries) == 0 {
		return nil
	}
	linker, err := protocol.NewEntrySealer(s.secret)
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	tx, err := s.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see openDB's txlock
	if err != nil {
		return fmt.Errorf("seal: begin: %w", err)
	}
	created := s.sealSchema.Load() // the span index and the energy tables exist
	var filter *onceFilter
	if once != nil {
		if filter, err = newOnceFilter(ctx, tx, once, len(p.entries), created, s.sealStmts); err == nil {
			err = filter.lookup(ctx, tx, p.bodies)
		}
	}
	if err == nil {
		err = s.appendEntries(ctx, tx, p, linker, filter, created)
	}
	if err != nil {
		s.sealFailed()
		return errors.Join(fmt.Errorf("seal: %w", err), rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		s.sealFailed()
		return fmt.Errorf("seal: commit: %w", err)
	}
	if once != nil {
		s.sealSchema.Store(true)
	}
	s.sealStmts.fill(ctx)
	return nil
}

// sealFailed forgets what the seals before took for granted: the schema objects they
// created, and the statements prepared on them (another process may have dropped one).
func (s *Store) sealFailed() {
	s.sealSchema.Store(false)
	_ = s.sealStmts.forget()
}

func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// prepared is a batch of entries being sealed in chunks of insertRows by prepare's workers.
type prepared struct {
	bodies  []protocol.SpanBody // what the entries are made of; SealOnce looks their ids up
	entries []*protocol.Entry
	energy  []sealedEnergy  // energy[i] is the energy_log row of entries[i] (see energy.go)
	errs    []error         // errs[i] is the first error in chunk i
	done    []chan struct{} // done[i] is closed when chunk i is sealed
	stop    atomic.Bool     // set when Seal returns: chunks not started are skipped
}

// chunk returns the entries of chunk i once they are sealed.
func (p *prepared) chunk(ctx context.Context, i int) ([]*protocol.Entry, error) {
	select {
	case <-p.done[i]:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.entries[i*insertRows : min((i+1)*insertRows, len(p.entries))], p.errs[i]
}

// prepare starts building the entries of bodies with protocol.NewUnlinkedEntry, on all
// cores, chunks in order; appendEntries links each into its place in the chain, computing
// its HMAC once. The entries are not checked again with protocol.CheckEntry: an unlinked
// entry passes it once linked, by construction (see NewUnlinkedEntry, and
// TestSealedEntriesPassCheckEntry, which checks every entry Seal returns).
func (s *Store) prepare(bodies []protocol.SpanBody) *prepared {
	n := (len(bodies) + insertRows - 1) / insertRows
	p := &prepared{bodies: bodies, entries: make([]*protocol.Entry, len(bodies)), energy: make([]sealedEnergy, len(bodies)),
		errs: make([]error, n), done: make([]chan struct{}, n)}
	for i := range p.done {
		p.done[i] = make(chan struct{})
	}
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), n) {
		go func() {
			for c := int(next.Add(1) - 1); c < n; c = int(next.Add(1) - 1) {
				for i := c * insertRows; i < min((c+1)*insertRows, len(bodies)) && !p.stop.Load(); i++ {
					e, err := protocol.NewUnlinkedEntry(&bodies[i])
					if err != nil {
						p.errs[c] = fmt.Errorf("body %d: %w", i, err)
						break
					}
					p.entries[i] = e
					p.energy[i] = energyOfBody(&bodies[i])
				}
				close(p.done[c])
			}
		}()
	}
	return p
}

// appendEntries reads the last row, then links each chunk of entries after it with linker
// and inserts it as soon as it is sealed, with its energy_log rows (see energy.go), while
// the workers seal the next chunks. With a filter, only the entries it keeps are linked
// and inserted (see SealOnce).
func (s *Store) appendEntries(ctx context.Context, tx *sql.Tx, p *prepared, linker *protocol.EntrySealer, filter *onceFilter, created bool) error {
	var last int64
	prev := protocol.GenesisPrevHash
	err := tx.QueryRowContext(ctx, `SELECT seq, hmac_hash FROM chain ORDER BY seq DESC LIMIT 1`).Scan(&last, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read last entry: %w", err)
	}
	energy, err := newSealEnergyLog(ctx, tx, last, created, s.sealStmts)
	if err != nil {
		return err
	}
	var stmt *sql.Stmt // the INSERT of stmtRows rows
	stmtRows := 0
	args := make([]any, 0, insertRows*10)
	checked := false // whether the chain's last entry was checked
	var kept []*protocol.Entry
	var keptEnergy []sealedEnergy
	for c := range p.done {
		chunk, err := p.chunk(ctx, c)
		if err != nil {
			return err
		}
		energyOf := p.energy[c*insertRows:]
		if filter != nil {
			kept, keptEnergy = kept[:0], keptEnergy[:0]
		}
		args = args[:0]
		for i, e := range chunk {
			if filter != nil {
				if !filter.keep(c*insertRows+i, e) {
					continue
				}
				kept, keptEnergy = append(kept, e), append(keptEnergy, energyOf[i])
			}
			linker.Link(e, last+1, prev)
			if filter != nil {
				filter.linked(e)
			}
			ts, err := strconv.ParseInt(e.TimestampNS, 10, 64)
			if err != nil {
				return fmt.Errorf("entry seq %d: timestamp_ns: %w", e.Seq, err)
			}
			args = append(args, e.Seq, ts, e.TraceID, e.SpanID, e.SpanName, e.SpanKind,
				e.CanonicalBody, e.CanonicalHash, e.PrevHash, e.HMACHash)
			last, prev = e.Seq, e.HMACHash
		}
		if filter != nil {
			if len(kept) == 0 {
				continue
			}
			chunk, energyOf = kept, keptEnergy
		}
		if !checked {
			// Its prev_hash is the last row's hmac_hash: refuse to build on one that is
			// not of its shape.
			if err := protocol.CheckEntry(chunk[0], nil); err != nil {
				return fmt.Errorf("the chain's last entry cannot be built on: %w", err)
			}
			checked = true
		}
		if stmtRows != len(chunk) {
			prepare := tx.PrepareContext
			if len(chunk) == insertRows {
				prepare = func(ctx context.Context, q string) (*sql.Stmt, error) { return s.sealStmts.stmt(ctx, tx, q) }
			}
			if stmt, err = prepare(ctx, insertSQL(len(chunk))); err != nil {
				return fmt.Errorf("prepare insert: %w", err)
			}
			stmtRows = len(chunk)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert entries %d-%d: %w", chunk[0].Seq, last, err)
		}
		if err := energy.addEntries(ctx, tx, chunk, energyOf); err != nil {
			return err
		}
	}
	return energy.finish(ctx, tx)
}

// insertSQL is an INSERT of n rows.
func insertSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO chain (" + columns + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}
