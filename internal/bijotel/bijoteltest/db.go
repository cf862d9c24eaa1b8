package bijoteltest

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	// The cgo-free SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// Schema is the original's chain table and its indexes (LEGACY-BIJOTEL.md §1.1), as
// _init_chain_db creates them.
const Schema = tableColumns + `,
    semantic_body_hash TEXT
);
` + traceIndex + `
CREATE INDEX IF NOT EXISTS idx_chain_semhash ON chain(semantic_body_hash);`

// oldSchema is the table of versions before semantic_body_hash was added.
const oldSchema = tableColumns + "\n);\n" + traceIndex

const tableColumns = `CREATE TABLE IF NOT EXISTS chain (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    timestamp_ns INTEGER NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    span_name TEXT NOT NULL,
    span_kind TEXT,
    canonical_body BLOB NOT NULL,
    canonical_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hmac_hash TEXT NOT NULL`

const traceIndex = `CREATE INDEX IF NOT EXISTS idx_chain_trace  ON chain(trace_id);`

// DBOptions says how WriteDB lays out a chain file.
type DBOptions struct {
	// NoSemanticColumn creates the older table without semantic_body_hash (and its index);
	// the rows' SemanticBodyHash is then not written.
	NoSemanticColumn bool
}

// WriteDB creates the original's chain file at path as _init_chain_db does (busy_timeout
// 5000, WAL, the schema in one BEGIN IMMEDIATE, mode 0600) and inserts rows with their own
// seqs in one transaction, so trimmed chains (first seq above 1) and archived prefixes can
// be made. The rows need not be valid: tests write broken chains with it too.
func WriteDB(path string, rows []bijotel.Row, o DBOptions) (err error) {
	db, err := OpenDB(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		return fmt.Errorf("bijoteltest: %s: %w", path, err)
	}
	schema, insert := Schema, `INSERT INTO chain (seq, timestamp_ns, trace_id, span_id, span_name, span_kind,
		canonical_body, canonical_hash, prev_hash, hmac_hash, semantic_body_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?)`
	if o.NoSemanticColumn {
		schema, insert = oldSchema, `INSERT INTO chain (seq, timestamp_ns, trace_id, span_id, span_name, span_kind,
		canonical_body, canonical_hash, prev_hash, hmac_hash) VALUES (?,?,?,?,?,?,?,?,?,?)`
	}
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("bijoteltest: %s: %w", path, err)
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("bijoteltest: create chain table in %s: %w", path, err)
	}
	st, err := tx.Prepare(insert)
	if err != nil {
		return fmt.Errorf("bijoteltest: %s: %w", path, err)
	}
	defer func() { _ = st.Close() }()
	for i := range rows {
		r := &rows[i]
		args := []any{r.Seq, r.TimestampNS, r.TraceID, r.SpanID, r.SpanName, nullable(r.SpanKind),
			r.CanonicalBody, r.CanonicalHash, r.PrevHash, r.HMACHash}
		if !o.NoSemanticColumn {
			args = append(args, nullable(r.SemanticBodyHash))
		}
		if _, err := st.Exec(args...); err != nil {
			return fmt.Errorf("bijoteltest: insert seq %d into %s: %w", r.Seq, path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bijoteltest: %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("bijoteltest: %w", err)
	}
	return nil
}

// OpenDB opens path read-write with the original's settings (busy_timeout 5000,
// transactions BEGIN IMMEDIATE), creating it when it does not exist. Tests use it to
// write a chain file the way the original does, or to tamper with one.
func OpenDB(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("bijoteltest: open %s: %w", path, err)
	}
	return db, nil
}

// CreateTable runs DDL (a CREATE TABLE IF NOT EXISTS) on the file at path, creating it:
// tests make tables the original would not, for WriteDB to fill.
func CreateTable(path, ddl string) (err error) {
	db, err := OpenDB(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if _, err := db.Exec(ddl); err != nil {
		return fmt.Errorf("bijoteltest: %s: %w", path, err)
	}
	return nil
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
