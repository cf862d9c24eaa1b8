package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// This file keeps regression runs (internal/analysis) in the chain's database, in a
// table of their own beside the chain: a run is a report about the chain, not part of
// it, and no hash covers it. The table is created by the first run saved, so files
// written before it existed keep working, and readers find no runs in them.

// regressionSchema creates the table of regression runs: the run's id, when it ran
// (RFC 3339 UTC) and the run as JSON (analysis.Run, its id included; runs saved before
// issue 17 have another shape, which decodeRun converts).
const regressionSchema = `CREATE TABLE IF NOT EXISTS regression_runs (
	id         INTEGER PRIMARY KEY,
	created_at TEXT NOT NULL,
	result     TEXT NOT NULL
) STRICT`

var _ analysis.Chain = (*Store)(nil)

// MaxRegressionHistory bounds the runs RegressionHistory returns at once.
const MaxRegressionHistory = 1000

// ErrNoRegressionRun is returned by LatestRegression and Regression when there is no
// such run.
var ErrNoRegressionRun = errors.New("no such regression run")

// selectWindow reads what a regression run needs of some rows: nothing but the seq and
// the body, through the primary key.
const selectWindow = `SELECT seq, canonical_body FROM chain WHERE seq BETWEEN ? AND ? ORDER BY seq`

// minWindowPart is the fewest rows RegressionWindow reads in a goroutine of its own.
const minWindowPart = 2000

// RegressionWindow returns the seq and canonical body of the entries with the last n
// seqs of the chain, oldest first: the last n entries of an unbroken chain. It reads no
// other row and no other column, and checks nothing. A large window is read in parts,
// one read transaction and goroutine each (one per core): the rows up to the last seq,
// read first, never change. n must be positive.
func (s *Store) RegressionWindow(ctx context.Context, n int) ([]analysis.WindowEntry, error) {
	if n <= 0 {
		return nil, fmt.Errorf("read the regression window: n is %d, want a positive number", n)
	}
	last, err := s.LastSeq(ctx)
	if err != nil {
		return nil, err
	}
	if last == 0 {
		return []analysis.WindowEntry{}, nil
	}
	entries, err := s.readRange(ctx, max(1, last-int64(n)+1), last)
	if err != nil {
		return nil, fmt.Errorf("read the last %d entries: %w", n, err)
	}
	return entries, nil
}

// readRange reads the seq and body of the rows from first to last, in parts, one read
// transaction and goroutine each (one per core): the rows up to the last seq, read
// first, never change.
func (s *Store) readRange(ctx context.Context, first, last int64) ([]analysis.WindowEntry, error) {
	size := last - first + 1
	parts := max(1, min(int64(runtime.GOMAXPROCS(0)), size/minWindowPart))
	rows, errs := make([][]analysis.WindowEntry, parts), make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := first+p*size/parts, first+(p+1)*size/parts-1
		wg.Go(func() { rows[p], errs[p] = s.windowRows(ctx, lo, hi) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(rows...), nil
}

// windowRows reads the seq and body of the rows from lo to hi, in one read transaction.
func (s *Store) windowRows(ctx context.Context, lo, hi int64) ([]analysis.WindowEntry, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	rows, err := tx.QueryContext(ctx, selectWindow, lo, hi)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := make([]analysis.WindowEntry, 0, hi-lo+1)
	for rows.Next() {
		var e analysis.WindowEntry
		if err := rows.Scan(&e.Seq, &e.Body); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// SaveRegression stores run under the next id, which it sets in run.ID. It needs a
// store opened with the secret (ErrNoSecret otherwise): read-only stores never write.
func (s *Store) SaveRegression(ctx context.Context, run *analysis.Run) error {
	if s.write == nil {
		return fmt.Errorf("save regression run: %w", ErrNoSecret)
	}
	tx, err := s.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: ids are read and taken under the write lock
	if err != nil {
		return fmt.Errorf("save regression run: begin: %w", err)
	}
	id, err := insertRegression(ctx, tx, run)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return errors.Join(fmt.Errorf("save regression run: %w", err), rollback(tx))
	}
	run.ID = id
	return nil
}

// insertRegression creates the table if needed and inserts run under the next id.
func insertRegression(ctx context.Context, tx *sql.Tx, run *analysis.Run) (int64, error) {
	if _, err := tx.ExecContext(ctx, regressionSchema); err != nil {
		return 0, fmt.Errorf("create regression_runs table: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM regression_runs`).Scan(&id); err != nil {
		return 0, err
	}
	saved := *run
	saved.ID = id
	result, err := json.Marshal(&saved)
	if err != nil {
		return 0, fmt.Errorf("encode run: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO regression_runs (id, created_at, result) VALUES (?, ?, ?)`,
		id, run.RanAt.UTC().Format(time.RFC3339Nano), string(result))
	return id, err
}

// LatestRegression returns the run saved last, or an error wrapping ErrNoRegressionRun
// when there is none.
func (s *Store) LatestRegression(ctx context.Context) (*analysis.Run, error) {
	runs, err := s.regressionRuns(ctx, `SELECT result FROM regression_runs ORDER BY id DESC LIMIT 1`)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("latest regression run: %w", ErrNoRegressionRun)
	}
	return runs[0], nil
}

// Regression returns the run with the given id, or an error wrapping ErrNoRegressionRun.
func (s *Store) Regression(ctx context.Context, id int64) (*analysis.Run, error) {
	runs, err := s.regressionRuns(ctx, `SELECT result FROM regression_runs WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("regression run %d: %w", id, ErrNoRegressionRun)
	}
	return runs[0], nil
}

// RegressionHistory returns the last limit runs (1 to MaxRegressionHistory), newest
// first; an empty list when there are none.
func (s *Store) RegressionHistory(ctx context.Context, limit int) ([]*analysis.Run, error) {
	if limit < 1 || limit > MaxRegressionHistory {
		return nil, fmt.Errorf("regression history: limit %d: want 1 to %d", limit, MaxRegressionHistory)
	}
	return s.regressionRuns(ctx, `SELECT result FROM regression_runs ORDER BY id DESC LIMIT ?`, limit)
}

// regressionRuns runs a query selecting the result column of regression_runs and decodes
// each run; none when the file has no such table.
func (s *Store) regressionRuns(ctx context.Context, query string, args ...any) ([]*analysis.Run, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	runs := []*analysis.Run{}
	if ok, err := hasTable(ctx, tx, "regression_runs"); err != nil || !ok {
		return runs, err
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read regression runs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var result []byte
		if err := rows.Scan(&result); err != nil {
			return nil, fmt.Errorf("read regression runs: %w", err)
		}
		run, err := decodeRun(result)
		if err != nil {
			return nil, fmt.Errorf("read regression runs: %w", err)
		}
		runs = append(runs, run)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read regression runs: %w", err)
	}
	return runs, nil
}

// hasTable reports whether the database has a table of that name.
func hasTable(ctx context.Context, tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return n == 1, nil
}

// RegressionRange returns the seq and canonical body of the entries from seq first to
// last, oldest first, as RegressionWindow reads them (in parts, one per core, for a
// large range). It is how a chart reads again the window of a saved run. first must be
// at least 1 and last at least first.
func (s *Store) RegressionRange(ctx context.Context, first, last int64) ([]analysis.WindowEntry, error) {
	if first < 1 || last < first {
		return nil, fmt.Errorf("read entries %d to %d: not a range of seqs", first, last)
	}
	return s.readRange(ctx, first, last)
}

// Timestamps returns the timestamp_ns column of the entries with the given seqs, by
// seq. A seq without an entry, or whose column is not an integer (only tampering makes
// one), is left out.
func (s *Store) Timestamps(ctx context.Context, seqs []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	const batch = 500
	for start := 0; start < len(seqs); start += batch {
		part := seqs[start:min(start+batch, len(seqs))]
		args := make([]any, len(part))
		for i, seq := range part {
			args[i] = seq
		}
		q := "SELECT seq, timestamp_ns FROM chain WHERE seq IN (?" + strings.Repeat(",?", len(part)-1) + ")"
		if err := scanTimestamps(ctx, tx, q, args, out); err != nil {
			return nil, fmt.Errorf("read timestamps: %w", err)
		}
	}
	return out, nil
}

// scanTimestamps runs q and adds each (seq, integer timestamp_ns) row to out.
func scanTimestamps(ctx context.Context, tx *sql.Tx, q string, args []any, out map[int64]int64) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var seq int64
		var ts any
		if err := rows.Scan(&seq, &ts); err != nil {
			return err
		}
		if n, ok := ts.(int64); ok {
			out[seq] = n
		}
	}
	return rows.Err()
}
