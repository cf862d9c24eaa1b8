package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps the energy log: a row per chain entry whose span carries token counts,
// with the energy and CO2 internal/analysis estimates for it. Seal fills it in the
// transaction that seals the entries; BackfillEnergy adds the rows of entries sealed
// without it (by an older cairn, or before the table existed). Like regression_runs it is
// a report beside the chain, not part of it, and is created when first written.

// energySchema creates the energy log. model and region are as the span names them ("" when
// it names none); tokens is input plus output tokens; wh and co2_g are the estimates of
// internal/analysis's tables when the entry was sealed, co2_g with the fallback region's
// intensity when the region is "" or unknown. They record what was estimated then:
// EnergySummary recomputes both from the tokens with the current tables.
const energySchema = `CREATE TABLE IF NOT EXISTS energy_log (
	seq    INTEGER PRIMARY KEY,
	model  TEXT NOT NULL,
	region TEXT NOT NULL,
	tokens INTEGER NOT NULL,
	wh     REAL NOT NULL,
	co2_g  REAL NOT NULL
) STRICT`

// createEnergyLog creates the energy log and its totals in tx when missing, and makes
// the totals whole again if another program wrote the log (see energytotals.go).
func createEnergyLog(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, energySchema); err != nil {
		return fmt.Errorf("create energy_log table: %w", err)
	}
	return prepareEnergyTotals(ctx, tx)
}

// energyColumns is how many columns an energy_log row has.
const energyColumns = 6

// backfillRows is how many chain entries BackfillEnergy reads per transaction: each
// holds the write lock briefly, so that Seals (here or in other processes) go on.
const backfillRows = 1000

// energyWriter inserts energy_log rows insertRows at a time.
type energyWriter struct {
	verb   string // "INSERT" or "INSERT OR IGNORE"
	args   []any
	full   *sql.Stmt  // the statement of insertRows rows, prepared once
	cache  *stmtCache // where full comes from, when set
	added  int64      // rows inserted
	totals totalsDelta
}

// newSealEnergyLog returns the writer with which Seal logs, in tx, the energy of the
// entries it inserts after seq last (see appendEntries). Rows the log holds past the
// chain's last entry are deleted first: the log follows what the chain holds. With
// created, the tables are known to exist (an earlier seal of this Store created them),
// and only the totals are checked.
func newSealEnergyLog(ctx context.Context, tx *sql.Tx, last int64, created bool, cache *stmtCache) (*energyWriter, error) {
	if created {
		if err := syncEnergyTotals(ctx, tx); err != nil {
			return nil, err
		}
	} else if err := createEnergyLog(ctx, tx); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM energy_log WHERE seq > ?`, last); err != nil {
		return nil, fmt.Errorf("delete energy_log rows past seq %d: %w", last, err)
	}
	return &energyWriter{verb: "INSERT", cache: cache}, nil
}

// sealedEnergy is the energy_log row of a body being sealed; ok is false when the body
// has no token counts. Seal's workers compute it beside the entry, on all cores.
type sealedEnergy struct {
	rec analysis.EnergyRecord
	ok  bool
}

// energyOfBody returns the energy_log row of body.
func energyOfBody(body *protocol.SpanBody) sealedEnergy {
	f := analysis.FactsOf(body)
	rec, ok := analysis.EnergyOf(&f)
	return sealedEnergy{rec, ok}
}

// addEntries adds the rows of entries that have one; energy[i] is that of entries[i].
// Rows are inserted insertRows at a time; flush inserts the rest.
func (w *energyWriter) addEntries(ctx context.Context, tx *sql.Tx, entries []*protocol.Entry, energy []sealedEnergy) error {
	for i, e := range entries {
		if energy[i].ok {
			if err := w.add(ctx, tx, e.Seq, &energy[i].rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// add adds the row of entry seq, inserting the rows added so far when they make a full
// statement.
func (w *energyWriter) add(ctx context.Context, tx *sql.Tx, seq int64, rec *analysis.EnergyRecord) error {
	w.args = append(w.args, seq, rec.Model, rec.Region, rec.Tokens, rec.Wh, rec.CO2g)
	w.totals.add(rec.Model, rec.Region, rec.Tokens)
	if len(w.args) == insertRows*energyColumns {
		return w.flush(ctx, tx)
	}
	return nil
}

// flush inserts the rows added since the last flush.
func (w *energyWriter) flush(ctx context.Context, tx *sql.Tx) error {
	rows := len(w.args) / energyColumns
	if rows == 0 {
		return nil
	}
	var res sql.Result
	var err error
	if rows == insertRows {
		if w.full == nil {
			if w.full, err = w.prepare(ctx, tx, w.insertSQL(rows)); err != nil {
				return fmt.Errorf("prepare energy_log insert: %w", err)
			}
		}
		res, err = w.full.ExecContext(ctx, w.args...)
	} else {
		res, err = tx.ExecContext(ctx, w.insertSQL(rows), w.args...)
	}
	if err != nil {
		return fmt.Errorf("insert energy_log rows of seq %v-%v: %w", w.args[0], w.args[len(w.args)-energyColumns], err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("insert energy_log rows: %w", err)
	}
	w.added += n
	if n != int64(rows) { // rows ignored: the delta no longer says what was added
		w.totals.stale = true
	}
	w.args = w.args[:0]
	return nil
}

// finish inserts the rows left and brings the totals up to what was inserted.
func (w *energyWriter) finish(ctx context.Context, tx *sql.Tx) error {
	if err := w.flush(ctx, tx); err != nil {
		return err
	}
	return w.totals.apply(ctx, tx)
}

// prepare prepares q in tx, through the cache if the writer has one.
func (w *energyWriter) prepare(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if w.cache != nil {
		return w.cache.stmt(ctx, tx, q)
	}
	return tx.PrepareContext(ctx, q)
}

// insertSQL is an insert of n energy_log rows.
func (w *energyWriter) insertSQL(n int) string {
	var b strings.Builder
	b.WriteString(w.verb + " INTO energy_log (seq, model, region, tokens, wh, co2_g) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?)")
	}
	return b.String()
}

// BackfillEnergy adds the energy_log rows missing for entries with token counts and
// returns how many it added: run again, it adds none. It reads and writes backfillRows
// entries per transaction, so it can be stopped and resumed, and Seals go on meanwhile.
// It needs a store opened with the secret (ErrNoSecret otherwise), and fails on an entry
// whose body is not JSON (verify the chain).
func (s *Store) BackfillEnergy(ctx context.Context) (int64, error) {
	if s.write == nil {
		return 0, fmt.Errorf("backfill energy log: %w", ErrNoSecret)
	}
	var added int64
	for after := int64(0); ; {
		n, last, err := s.backfillBatch(ctx, after)
		added += n
		if err != nil {
			return added, fmt.Errorf("backfill energy log: %w", err)
		}
		if last == after {
			return added, nil
		}
		after = last
	}
}

// backfillBatch logs the energy of up to backfillRows entries after seq after that have no
// row yet, and returns how many rows it added and the last seq it read (after when none).
func (s *Store) backfillBatch(ctx context.Context, after int64) (added, last int64, err error) {
	tx, err := s.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see openDB's txlock
	if err != nil {
		return 0, after, fmt.Errorf("begin: %w", err)
	}
	added, last, err = backfillTx(ctx, tx, after)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return 0, after, errors.Join(err, rollback(tx))
	}
	return added, last, nil
}

func backfillTx(ctx context.Context, tx *sql.Tx, after int64) (added, last int64, err error) {
	if err := createEnergyLog(ctx, tx); err != nil {
		return 0, after, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, canonical_body FROM chain WHERE seq > ?
		AND NOT EXISTS (SELECT 1 FROM energy_log WHERE energy_log.seq = chain.seq) ORDER BY seq LIMIT ?`, after, backfillRows)
	if err != nil {
		return 0, after, fmt.Errorf("read entries after seq %d: %w", after, err)
	}
	type pending struct {
		seq int64
		rec analysis.EnergyRecord
	}
	var todo []pending
	last = after
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&last, &body); err != nil {
			_ = rows.Close()
			return 0, after, fmt.Errorf("read entries after seq %d: %w", after, err)
		}
		span, err := analysis.DecodeBody(body)
		if err != nil {
			_ = rows.Close()
			return 0, after, fmt.Errorf("entry seq %d: %w (verify the chain)", last, err)
		}
		f := analysis.FactsOf(&span)
		if rec, ok := analysis.EnergyOf(&f); ok {
			todo = append(todo, pending{last, rec})
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, after, fmt.Errorf("read entries after seq %d: %w", after, err)
	}
	w := energyWriter{verb: "INSERT OR IGNORE"}
	for i := range todo {
		if err := w.add(ctx, tx, todo[i].seq, &todo[i].rec); err != nil {
			return 0, after, err
		}
	}
	if err := w.finish(ctx, tx); err != nil {
		return 0, after, err
	}
	return w.added, last, nil
}

// EnergySummary totals the energy log with analysis.SummarizeEnergy, in one read
// transaction: an empty summary when the file has no energy log. Invalid overrides fail
// with an error wrapping analysis.ErrInvalidInput.
func (s *Store) EnergySummary(ctx context.Context, opts analysis.EnergySummaryOptions) (*analysis.EnergySummary, error) {
	if err := analysis.ValidateOverrides(opts.IntensityOverrides); err != nil {
		return nil, err
	}
	groups, err := s.energyGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("energy summary: %w", err)
	}
	sum := analysis.SummarizeEnergy(groups, opts)
	return &sum, nil
}

// EnergyLoggedThrough returns the highest seq the energy log holds a row for, 0 when it
// holds none or the file has no energy log. It reads one row of the key, so it takes
// constant time, where EnergySummary reads the whole log.
func (s *Store) EnergyLoggedThrough(ctx context.Context) (int64, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	if ok, err := hasTable(ctx, tx, "energy_log"); err != nil || !ok {
		return 0, err
	}
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM energy_log`).Scan(&last); err != nil {
		return 0, fmt.Errorf("read energy_log: %w", err)
	}
	return last.Int64, nil
}

// energyGroupsQuery is the query of the log's calls and tokens by model and region: the
// totals, when they are whole (see energytotals.go), else a sum over the whole log.
func energyGroupsQuery(ctx context.Context, tx *sql.Tx) (string, error) {
	const fromTotals = `SELECT model, region, calls, tokens FROM energy_totals WHERE calls > 0 ORDER BY model, region`
	const fromLog = `SELECT model, region, count(*), sum(tokens) FROM energy_log GROUP BY model, region ORDER BY model, region`
	whole, err := energyTotalsWhole(ctx, tx)
	if err != nil || !whole {
		return fromLog, err
	}
	return fromTotals, nil
}

// energyGroups sums the energy log's calls and tokens by model and region.
func (s *Store) energyGroups(ctx context.Context) ([]analysis.EnergyGroup, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	if ok, err := hasTable(ctx, tx, "energy_log"); err != nil || !ok {
		return nil, err
	}
	query, err := energyGroupsQuery(ctx, tx)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read energy_log: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var groups []analysis.EnergyGroup
	for rows.Next() {
		var g analysis.EnergyGroup
		if err := rows.Scan(&g.Model, &g.Region, &g.Calls, &g.Tokens); err != nil {
			return nil, fmt.Errorf("read energy_log: %w", err)
		}
		groups = append(groups, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read energy_log: %w", err)
	}
	return groups, nil
}
