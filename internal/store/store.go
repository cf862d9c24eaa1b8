package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	// The cgo-free SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNoSecret is returned by Seal and Export on a store opened without a secret.
var ErrNoSecret = errors.New("store opened without the chain's HMAC secret")

// ErrWrongSecret means the secret does not match the chain: the first entry checked fails
// its HMAC although its body and link are intact, and its neighbours say the same (see
// Verify). The error also wraps the *protocol.EntryError of that entry.
var ErrWrongSecret = errors.New("the HMAC secret does not match the chain")

// schema creates the chain table. seq is the rowid, so rows are stored in seq order and
// read back in it without an index.
const schema = `CREATE TABLE IF NOT EXISTS chain (
	seq            INTEGER PRIMARY KEY,
	timestamp_ns   INTEGER NOT NULL,
	trace_id       TEXT NOT NULL,
	span_id        TEXT NOT NULL,
	span_name      TEXT NOT NULL,
	span_kind      TEXT NOT NULL,
	canonical_body BLOB NOT NULL,
	canonical_hash TEXT NOT NULL,
	prev_hash      TEXT NOT NULL,
	hmac_hash      TEXT NOT NULL
) STRICT`

// columns are the chain's columns in the order every query selects them.
const columns = `seq, timestamp_ns, trace_id, span_id, span_name, span_kind, canonical_body, canonical_hash, prev_hash, hmac_hash`

// Store is an operator's chain in a SQLite file. Its methods may be called from several
// goroutines.
type Store struct {
	path   string
	secret []byte  // nil: read-only, no HMAC checks
	read   *sql.DB // Verify, Export, Stats
	write  *sql.DB // Seal: one connection whose transactions begin IMMEDIATE; nil when read-only

	// stmts holds the statements the frequent small reads use, prepared once on read
	// (database/sql then keeps each prepared on every connection it ran on): parsing the
	// SQL again cost a sixth of a page of GET /api/chain.
	stmts sync.Map // query text → *sql.Stmt

	// sealStmts are the statements of a seal, prepared on write (stmtcache.go); nil when
	// read-only. sealSchema is set once a SealOnce committed, which created the span
	// index and the energy tables, so that the seals after it do not run their CREATE
	// statements again; a failed seal clears both.
	sealStmts  *stmtCache
	sealSchema atomic.Bool
}

// Open opens or creates the chain at path. secret is the chain's HMAC key (at least
// protocol.MinSecretBytes), or nil to open an existing chain read-only: Verify then skips
// the HMACs, and Seal and Export fail with ErrNoSecret. See the package documentation for
// the SQLite settings.
func Open(path string, secret []byte) (*Store, error) {
	return open(path, secret, true)
}

// ErrNoChain means the file a chain was to be read from does not exist. An error that is
// ErrNoChain is fs.ErrNotExist too.
var ErrNoChain = errors.New("the chain does not exist")

// noChainError is OpenExisting's ErrNoChain for one path.
type noChainError struct{ path string }

func (e *noChainError) Error() string {
	return fmt.Sprintf("chain %s does not exist (cairn chain seal or cairn serve creates one)", e.path)
}

// Is makes errors.Is(err, ErrNoChain) and errors.Is(err, fs.ErrNotExist) true.
func (e *noChainError) Is(target error) bool { return target == ErrNoChain || target == fs.ErrNotExist }

// OpenExisting opens the chain at path as Open does, but creates nothing: a path that
// does not exist is an error wrapping ErrNoChain, and a file without a chain table is an
// error too, the file left as it was. Commands that read or extend a chain (verify,
// stats, export, analysis) open it this way, so that a mistyped path is an error rather
// than an empty chain that verifies.
func OpenExisting(path string, secret []byte) (*Store, error) {
	return open(path, secret, false)
}

// open opens the chain at path, creating the file and its table when create is true.
func open(path string, secret []byte, create bool) (*Store, error) {
	if secret != nil && len(secret) < protocol.MinSecretBytes {
		return nil, fmt.Errorf("chain secret is %d bytes, want at least %d", len(secret), protocol.MinSecretBytes)
	}
	s := &Store{path: path, secret: bytes.Clone(secret)}
	switch {
	case !create || secret == nil:
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &noChainError{path}
		} else if err != nil {
			return nil, fmt.Errorf("open chain: %w", err)
		}
	default:
		// Create the file ourselves so that it gets mode 0600; SQLite would use 0644.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open chain: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("open chain: %w", err)
		}
	}
	mode := modeReadOnly
	if secret != nil {
		mode = modeReadWrite
		if create {
			mode = modeCreate
		}
	}
	if !create && secret != nil {
		// Look before writing anything, not even the journal mode: a file that holds no
		// chain is left exactly as it was.
		if err := probe(path); err != nil {
			return nil, err
		}
	}
	var err error
	if s.read, err = openDB(path, mode, ""); err != nil {
		return nil, err
	}
	if secret != nil {
		if s.write, err = openDB(path, mode, "immediate"); err != nil {
			return nil, errors.Join(err, s.read.Close())
		}
		// One writer connection: Seals in this process queue here rather than in SQLite's
		// busy handler. Other processes are kept out by the write lock.
		s.write.SetMaxOpenConns(1)
		s.sealStmts = newStmtCache(s.write)
		if create {
			if _, err := s.write.Exec(schema); err != nil {
				return nil, errors.Join(fmt.Errorf("create chain table in %s: %w", path, err), s.Close())
			}
		}
	}
	if err := s.checkTable(); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// checkTable returns an error when the file holds no chain table.
func (s *Store) checkTable() error {
	return hasChainTable(s.read, s.path)
}

// probe opens path read-only and returns an error when it holds no chain table.
func probe(path string) error {
	db, err := openDB(path, modeReadOnly, "")
	if err != nil {
		return err
	}
	return errors.Join(hasChainTable(db, path), db.Close())
}

// hasChainTable returns an error when db, opened on path, holds no chain table.
func hasChainTable(db *sql.DB, path string) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'chain'`).Scan(&n); err != nil {
		return fmt.Errorf("open chain %s: %w", path, err)
	}
	if n != 1 {
		return fmt.Errorf("%s has no chain table", path)
	}
	return nil
}

// How openDB opens a file.
const (
	modeReadOnly  = "ro"  // read only
	modeReadWrite = "rw"  // read and write, never create
	modeCreate    = "rwc" // read and write, create when missing
)

// openDB opens a connection pool on path in mode (modeReadOnly, modeReadWrite or
// modeCreate); txlock sets how transactions begin ("" for SQLite's default, DEFERRED).
func openDB(path, mode, txlock string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("mode", mode)
	if mode != modeReadOnly {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open chain %s: %w", path, err)
	}
	// Check now that the file opens and the settings apply, rather than at first use.
	if err := db.Ping(); err != nil {
		return nil, errors.Join(fmt.Errorf("open chain %s: %w", path, err), db.Close())
	}
	return db, nil
}

// Close closes the store's connections.
func (s *Store) Close() error {
	var errs []error
	s.stmts.Range(func(_, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		return true
	})
	if s.write != nil {
		errs = append(errs, s.sealStmts.forget(), s.write.Close())
	}
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	return errors.Join(errs...)
}

// readTx begins a read transaction: every query in it sees the same snapshot of the chain.
func (s *Store) readTx(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("read chain %s: %w", s.path, err)
	}
	return tx, nil
}

// prepared returns q prepared once for the store, on the read pool.
func (s *Store) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.read.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if first, loaded := s.stmts.LoadOrStore(q, st); loaded {
		_ = st.Close() // another goroutine prepared it first
		return first.(*sql.Stmt), nil
	}
	return st, nil
}

// selectLastSeq reads the chain's last seq, NULL when it is empty.
const selectLastSeq = `SELECT max(seq) FROM chain`

// lastSeq returns the highest seq in the chain, 0 when it is empty.
func lastSeq(ctx context.Context, tx *sql.Tx) (int64, error) {
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, selectLastSeq).Scan(&last); err != nil {
		return 0, fmt.Errorf("read chain: %w", err)
	}
	return last.Int64, nil
}
