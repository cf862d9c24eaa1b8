package witnessd

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// state is the witness's memory in a SQLite file: per log, the latest checkpoint it
// cosigned, and the evidence of the conflicts it refused. Every check-and-update runs in
// one immediate transaction, so two requests (or two witness processes on one file)
// cannot interleave and roll a log back (C2SP tlog-witness's race). Commits are synced:
// a witness must not forget a cosignature it gave.
type state struct {
	db           *sql.DB
	maxConflicts int
}

const stateSchema = `
CREATE TABLE IF NOT EXISTS latest (
	origin       TEXT PRIMARY KEY,
	size         INTEGER NOT NULL,
	root         BLOB NOT NULL,
	checkpoint   BLOB NOT NULL,
	cosignature  BLOB NOT NULL,
	cosigned_at  INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS conflicts (
	id          INTEGER PRIMARY KEY,
	origin      TEXT NOT NULL,
	kind        TEXT NOT NULL,
	seen_at     INTEGER NOT NULL,
	cosigned    BLOB NOT NULL,
	offered     BLOB NOT NULL,
	UNIQUE (origin, offered)
) STRICT;`

func openState(path string, maxConflicts int) (*state, error) {
	q := url.Values{"_pragma": {"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)"}, "_txlock": {"immediate"}}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(stateSchema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("witness state %s: %w", path, err)
	}
	return &state{db: db, maxConflicts: maxConflicts}, nil
}

func (s *state) close() error { return s.db.Close() }

// cosigned is the latest checkpoint the witness cosigned for a log.
type cosigned struct {
	Size        uint64
	Root        []byte
	Checkpoint  []byte // the note as the log signed it
	Cosignature []byte // the witness's signature line on it
	At          time.Time
}

// update reads the log's latest cosigned checkpoint (nil if none) and hands it to decide,
// in one immediate transaction. decide returns the checkpoint to record, or nil to record
// nothing, or an error, which rolls the transaction back and is returned.
func (s *state) update(ctx context.Context, origin string, decide func(prev *cosigned) (*cosigned, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	prev, err := latestIn(ctx, tx, origin)
	if err != nil {
		return err
	}
	next, err := decide(prev)
	if err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO latest VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (origin) DO UPDATE SET
		size = excluded.size, root = excluded.root, checkpoint = excluded.checkpoint,
		cosignature = excluded.cosignature, cosigned_at = excluded.cosigned_at`,
		origin, int64(next.Size), next.Root, next.Checkpoint, next.Cosignature, next.At.Unix())
	if err != nil {
		return err
	}
	return tx.Commit()
}

// latest returns the log's latest cosigned checkpoint, nil if none.
func (s *state) latest(ctx context.Context, origin string) (*cosigned, error) {
	return latestIn(ctx, s.db, origin)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func latestIn(ctx context.Context, q querier, origin string) (*cosigned, error) {
	var c cosigned
	var size, at int64
	err := q.QueryRowContext(ctx, `SELECT size, root, checkpoint, cosignature, cosigned_at FROM latest WHERE origin = ?`, origin).
		Scan(&size, &c.Root, &c.Checkpoint, &c.Cosignature, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.Size, c.At = uint64(size), time.Unix(at, 0).UTC()
	return &c, nil
}

// Conflict is a checkpoint the log signed that contradicts one the witness cosigned: the
// evidence of a split view or a rewritten log.
type Conflict struct {
	Origin   string    `json:"origin"`
	Kind     string    `json:"kind"`
	SeenAt   time.Time `json:"seen_at"`
	Cosigned string    `json:"cosigned_checkpoint"`
	Offered  string    `json:"offered_checkpoint"`
}

// recordConflict keeps the evidence: the first maxConflicts different offered checkpoints
// of each log, each once. Only the log's own key can sign what reaches here, so the bound
// is against a log that misbehaves in a loop, not against strangers.
func (s *state) recordConflict(ctx context.Context, c Conflict) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO conflicts (origin, kind, seen_at, cosigned, offered)
		SELECT ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM conflicts WHERE origin = ?) < ?`,
		c.Origin, c.Kind, c.SeenAt.Unix(), []byte(c.Cosigned), []byte(c.Offered), c.Origin, s.maxConflicts)
	return err
}

// conflicts returns the evidence kept for a log, oldest first.
func (s *state) conflicts(ctx context.Context, origin string) ([]Conflict, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, seen_at, cosigned, offered FROM conflicts WHERE origin = ? ORDER BY id`, origin)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := []Conflict{}
	for rows.Next() {
		var c Conflict
		var at int64
		var cos, off []byte
		if err := rows.Scan(&c.Kind, &at, &cos, &off); err != nil {
			return nil, err
		}
		c.Origin, c.SeenAt, c.Cosigned, c.Offered = origin, time.Unix(at, 0).UTC(), string(cos), string(off)
		out = append(out, c)
	}
	return out, rows.Err()
}
