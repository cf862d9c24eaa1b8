package tlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// leafIndex maps the embedded log's leaf hashes to their indexes and integration times,
// so that uploading a body the log holds returns its entry (tessera dedupes only in
// memory). It is a cache of the log, kept in a SQLite file beside it: every index below
// its watermark is in it, and catchUp rebuilds the rest from the log's entry bundles, so
// a crash between the log taking an entry and the index recording it loses nothing.
type leafIndex struct {
	db           *sql.DB
	lookupStmt   *sql.Stmt
	putStmt      *sql.Stmt
	integratedAt *sql.Stmt
}

const leafIndexSchema = `
CREATE TABLE IF NOT EXISTS leaves (
	leaf_hash       BLOB PRIMARY KEY,
	idx             INTEGER NOT NULL,
	integrated_unix INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS leaves_idx ON leaves (idx);
CREATE TABLE IF NOT EXISTS watermark (
	one  INTEGER PRIMARY KEY CHECK (one = 1),
	size INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO watermark VALUES (1, 0);`

// openLeafIndex opens or creates the index at path. Commits are not fsynced: after a
// power cut, catchUp restores what was lost from the log itself.
func openLeafIndex(path string) (*leafIndex, error) {
	q := url.Values{"_pragma": {"journal_mode(WAL)", "synchronous(OFF)", "busy_timeout(10000)"}}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	x := &leafIndex{db: db}
	if err := x.prepare(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("leaf index %s: %w", path, err)
	}
	return x, nil
}

// prepare creates the schema and prepares the statements every upload runs: parsing
// them each time cost as much as running them.
func (x *leafIndex) prepare() (err error) {
	if _, err = x.db.Exec(leafIndexSchema); err != nil {
		return err
	}
	if x.lookupStmt, err = x.db.Prepare(`SELECT idx, integrated_unix FROM leaves WHERE leaf_hash = ?`); err != nil {
		return err
	}
	if x.putStmt, err = x.db.Prepare(`INSERT OR IGNORE INTO leaves VALUES (?, ?, ?)`); err != nil {
		return err
	}
	x.integratedAt, err = x.db.Prepare(`SELECT integrated_unix FROM leaves WHERE idx = ?`)
	return err
}

func (x *leafIndex) close() error { return x.db.Close() }

// lookup returns where and when the log integrated the leaf with hash leaf, if it holds
// it.
func (x *leafIndex) lookup(ctx context.Context, leaf []byte) (indexed, bool, error) {
	var idx, unix int64
	err := x.lookupStmt.QueryRowContext(ctx, leaf).Scan(&idx, &unix)
	if errors.Is(err, sql.ErrNoRows) {
		return indexed{}, false, nil
	}
	return indexed{idx, time.Unix(unix, 0)}, err == nil, err
}

// integrated returns when the entry at idx was integrated, or the zero time if the index
// does not know.
func (x *leafIndex) integrated(ctx context.Context, idx int64) (time.Time, error) {
	var unix int64
	err := x.integratedAt.QueryRowContext(ctx, idx).Scan(&unix)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(unix, 0), nil
}

// put records where and when the log integrated leaf.
func (x *leafIndex) put(ctx context.Context, leaf []byte, at indexed) error {
	_, err := x.putStmt.ExecContext(ctx, leaf, at.index, at.integrated.Unix())
	return err
}

// catchUp records every leaf of the log below its integrated size that the index may be
// missing, reading them back from the entry bundles, and moves the watermark there.
func (x *leafIndex) catchUp(ctx context.Context, r tessera.LogReader) error {
	size, err := r.IntegratedSize(ctx)
	if err != nil {
		return err
	}
	var from uint64
	if err := x.db.QueryRowContext(ctx, `SELECT size FROM watermark`).Scan(&from); err != nil {
		return err
	}
	now := time.Now()
	for start := from - from%layout.EntryBundleWidth; start < size; start += layout.EntryBundleWidth {
		bundle, err := client.GetEntryBundle(ctx, r.ReadEntryBundle, start/layout.EntryBundleWidth, size)
		if err != nil {
			return err
		}
		tx, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i, body := range bundle.Entries {
			idx := start + uint64(i)
			if idx < from {
				continue
			}
			leaf := rfc6962.DefaultHasher.HashLeaf(body)
			if _, err := tx.StmtContext(ctx, x.putStmt).ExecContext(ctx, leaf, int64(idx), now.Unix()); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE watermark SET size = ?`, int64(min(start+layout.EntryBundleWidth, size))); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
