package legacydb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"

	// The cgo-free SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

var (
	// ErrCairnChain means the file is a Cairn chain file (its chain table is STRICT), not
	// the original's. It wraps protocol.ErrMalformed.
	ErrCairnChain = fmt.Errorf("%w: a Cairn chain file, not a BIJOTEL one (use it as a Cairn chain)", protocol.ErrMalformed)
	// ErrNotLegacy means the file is not a chain file of the original: not SQLite, no
	// chain table, or a chain table without the original's columns. It wraps
	// protocol.ErrMalformed.
	ErrNotLegacy = fmt.Errorf("%w: not a BIJOTEL chain file", protocol.ErrMalformed)
)

// sqliteMagic is the first 16 bytes of every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// busyTimeoutMS is how long a read waits for the original's writer, as the original waits.
const busyTimeoutMS = 5000

// DB is an open BIJOTEL chain file. Its methods may be called from several goroutines.
type DB struct {
	path     string
	db       *sql.DB
	semantic bool // the table has semantic_body_hash
}

// Is reports whether path is a SQLite file whose chain table is the original's (not
// Cairn's STRICT one). It opens the file read-only and never creates it: a missing file
// is an error wrapping fs.ErrNotExist. A file that is not SQLite, or has no such table,
// is false with no error.
func Is(path string) (bool, error) {
	ok, err := hasSQLiteMagic(path)
	if err != nil || !ok {
		return false, err
	}
	db, err := openRO(path)
	if err != nil {
		return false, err
	}
	defer func() { _ = db.Close() }()
	_, err = tableKind(context.Background(), db)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrCairnChain), errors.Is(err, ErrNotLegacy):
		return false, nil
	}
	return false, fmt.Errorf("legacydb: read %s: %w", path, err)
}

// Open opens a BIJOTEL chain file read-only. It never changes the file: no WAL switch, no
// chmod, no schema change, and it reads while the original app writes to it. A missing
// file is an error wrapping fs.ErrNotExist; a Cairn chain file is ErrCairnChain; any
// other file that is not the original's is ErrNotLegacy.
func Open(path string) (*DB, error) {
	ok, err := hasSQLiteMagic(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("legacydb: %s: %w (not a SQLite file)", path, ErrNotLegacy)
	}
	db, err := openRO(path)
	if err != nil {
		return nil, err
	}
	semantic, err := tableKind(context.Background(), db)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("legacydb: %s: %w", path, err), db.Close())
	}
	return &DB{path: path, db: db, semantic: semantic}, nil
}

// Close closes the file.
func (db *DB) Close() error { return db.db.Close() }

// hasSQLiteMagic reports whether path starts with SQLite's header. It opens the file
// read-only (never creating it).
func hasSQLiteMagic(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("legacydb: %w", err)
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil // shorter than a SQLite header
		}
		return false, fmt.Errorf("legacydb: read %s: %w", path, err)
	}
	return string(head) == sqliteMagic, nil
}

// openRO opens path read-only (mode=ro: SQLite neither creates nor writes the database
// file; in WAL mode it shares the original's -wal and -shm files to read a consistent
// snapshot) with the original's busy_timeout.
func openRO(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("legacydb: open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		return nil, errors.Join(fmt.Errorf("legacydb: open %s: %w", path, err), db.Close())
	}
	return db, nil
}

// legacyColumns are the original's chain columns and the types its schema declares, but
// semantic_body_hash, which older tables lack.
var legacyColumns = map[string]string{
	"seq": "INTEGER", "timestamp_ns": "INTEGER", "trace_id": "TEXT", "span_id": "TEXT",
	"span_name": "TEXT", "span_kind": "TEXT", "canonical_body": "BLOB", "canonical_hash": "TEXT",
	"prev_hash": "TEXT", "hmac_hash": "TEXT",
}

// tableKind checks that db holds the original's chain table and reports whether it has
// semantic_body_hash. A STRICT chain table is Cairn's (ErrCairnChain); a missing table,
// or one without the original's columns or with seq not its INTEGER PRIMARY KEY, is
// ErrNotLegacy.
func tableKind(ctx context.Context, db *sql.DB) (semantic bool, err error) {
	var strict sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT strict FROM pragma_table_list WHERE schema = 'main' AND name = 'chain' AND type = 'table'`).Scan(&strict)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w (no chain table)", ErrNotLegacy)
	}
	if err != nil {
		return false, err
	}
	if strict.Int64 != 0 {
		return false, ErrCairnChain
	}
	rows, err := db.QueryContext(ctx, `SELECT name, upper(type), pk FROM pragma_table_info('chain')`)
	if err != nil {
		return false, err
	}
	defer func() { _ = rows.Close() }()
	seen := map[string]bool{}
	for rows.Next() {
		var name, typ string
		var pk int64
		if err := rows.Scan(&name, &typ, &pk); err != nil {
			return false, err
		}
		if name == "semantic_body_hash" {
			semantic = true
			continue
		}
		want, known := legacyColumns[name]
		if !known {
			continue // a column added later: read what the original defines
		}
		if typ != want || (name == "seq") != (pk == 1) {
			return false, fmt.Errorf("%w (column %s is %s, pk %d; the original's is %s%s)",
				ErrNotLegacy, name, typ, pk, want, map[bool]string{true: " PRIMARY KEY"}[name == "seq"])
		}
		seen[name] = true
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for name := range legacyColumns {
		if !seen[name] {
			return false, fmt.Errorf("%w (the chain table has no column %s)", ErrNotLegacy, name)
		}
	}
	return semantic, nil
}
