// Package history is the federation's history store: the anchored Submissions and the
// CrossAnchors that have left etcd once their retention passed.
//
// One schema and one code path serve two databases through database/sql: SQLite (the
// same cgo-free driver as the chain store), a file on the log's volume by default, and
// PostgreSQL (pgx's database/sql adapter) for installations with several replicas or a
// managed database. Statements are written with ? placeholders and renumbered for
// PostgreSQL ($1, $2, ...).
//
// A database administrator can delete history but cannot forge it. Each row holds the
// record as the API server had it (its JSON, managedFields and resourceVersion dropped)
// and a seal: the federation's Ed25519 signature over the record's kind, its Federation's
// namespace and name, and that JSON, under a key of the Federation's key history. Reading a row checks
// the seal, that every other column says what the JSON says, and the record's own proofs
// (an anchor's hash and signature as federation.TrustAnchor checks them, a submission's
// signed export header), so a row that fails any check is reported (ErrTampered, or
// Options.OnTampered for a row met in a list) and never returned.
package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// The databases a Store can keep its rows in.
const (
	// SQLite is a file, named by Options.DSN (a path).
	SQLite = "sqlite"
	// Postgres is a PostgreSQL server, reached through Options.DSN (a libpq keyword
	// string or a postgres:// URL).
	Postgres = "postgres"
)

// ErrNotFound means the store holds no such record.
var ErrNotFound = errors.New("no such record in the federation's history")

// ErrTampered means a stored row failed a check on read: it was changed outside the
// federation. The error says which check failed, never a value that would have passed.
var ErrTampered = errors.New("history record does not verify")

// Options says which database a Store opens.
type Options struct {
	// Driver is SQLite or Postgres.
	Driver string
	// DSN is the SQLite file's path or PostgreSQL's connection string.
	DSN string
	// OnTampered, when set, is told of each row a list skipped because it failed a check.
	OnTampered func(kind, name string, err error)
}

// Store is a history store. It is safe for concurrent use.
type Store struct {
	db         *sql.DB
	postgres   bool
	onTampered func(kind, name string, err error)
}

// Open opens the history store o names, creating its tables when they are missing.
func Open(ctx context.Context, o Options) (*Store, error) {
	var (
		db  *sql.DB
		err error
	)
	switch o.Driver {
	case SQLite:
		db, err = openSQLite(o.DSN)
	case Postgres:
		db, err = sql.Open("pgx", o.DSN)
	default:
		return nil, fmt.Errorf("history store: unknown driver %q (want %s or %s)", o.Driver, SQLite, Postgres)
	}
	if err != nil {
		return nil, fmt.Errorf("history store: %w", err)
	}
	s := &Store{db: db, postgres: o.Driver == Postgres, onTampered: o.OnTampered}
	if err := s.migrate(ctx); err != nil {
		where := o.Driver // a connection string may hold a password (pgx's errors mask it)
		if o.Driver == SQLite {
			where += " " + o.DSN
		}
		return nil, errors.Join(fmt.Errorf("history store (%s): %w", where, err), db.Close())
	}
	return s, nil
}

// openSQLite opens the SQLite file at path, creating it when missing. Its writes are
// durable once committed (synchronous FULL): a record is deleted from etcd only after it
// is stored here. It keeps a rollback journal, not a write-ahead log: the file sits on
// the log's volume, which the replicas of a default install share (ReadWriteMany), and
// SQLite's write-ahead log needs its readers on the writer's host; file locks are what
// a rollback journal needs. The leader writes in transactions of many records, so the
// journal's second sync a commit costs little.
func openSQLite(path string) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("the SQLite history store needs a file path")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "journal_mode(DELETE)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	return sql.Open("sqlite", u.String())
}

// fedKey names fed in the store: its namespace and name. A Federation restored under
// its name (a new object) with its keys reads its history again; one made again with
// other keys finds the rows sealed before it under keys its key history lacks, which it
// treats as absent (errForeign).
func fedKey(fed *fv1.Federation) string { return fed.Namespace + "/" + fed.Name }

// Close closes the store's connections.
func (s *Store) Close() error { return s.db.Close() }

// schema is the store's tables, the same text for both databases. A participant row
// indexes an anchor by operator; it is not evidence: every anchor found through it is
// read and checked, and must list the operator. A leaf row is one participant of a
// Merkle-form anchor, stored before the anchor is made and named by the anchor's ID and
// root: it is not evidence either, and counts only as part of the whole set of its
// anchor's rows, whose tree must give the root the anchor's signed record states. A sidecar row keeps the attestation
// sidecar a stored submission names from the sidecar store's sweep; a forged one keeps a
// file, a deleted one loses it, as deleting the submission would.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS cairn_history_anchors (
		federation TEXT NOT NULL,
		namespace TEXT NOT NULL,
		anchor_id TEXT NOT NULL,
		anchored_at TEXT NOT NULL,
		object TEXT NOT NULL,
		sealed_by TEXT NOT NULL,
		seal TEXT NOT NULL,
		PRIMARY KEY (federation, anchor_id))`,
	`CREATE TABLE IF NOT EXISTS cairn_history_participants (
		federation TEXT NOT NULL,
		operator_id TEXT NOT NULL,
		anchor_id TEXT NOT NULL,
		PRIMARY KEY (federation, operator_id, anchor_id))`,
	`CREATE TABLE IF NOT EXISTS cairn_history_submissions (
		federation TEXT NOT NULL,
		namespace TEXT NOT NULL,
		name TEXT NOT NULL,
		operator_id TEXT NOT NULL,
		first_seq BIGINT NOT NULL,
		last_seq BIGINT NOT NULL,
		anchor_id TEXT NOT NULL,
		object TEXT NOT NULL,
		sealed_by TEXT NOT NULL,
		seal TEXT NOT NULL,
		PRIMARY KEY (federation, name))`,
	`CREATE TABLE IF NOT EXISTS cairn_history_sidecars (
		federation TEXT NOT NULL,
		digest TEXT NOT NULL,
		name TEXT NOT NULL,
		PRIMARY KEY (federation, digest, name))`,
	`CREATE INDEX IF NOT EXISTS cairn_history_submissions_by_operator
		ON cairn_history_submissions (federation, operator_id, last_seq)`,
	`CREATE TABLE IF NOT EXISTS cairn_history_leaves (
		federation TEXT NOT NULL,
		anchor_id TEXT NOT NULL,
		root_hash TEXT NOT NULL,
		leaf_index BIGINT NOT NULL,
		operator_id TEXT NOT NULL,
		chain_signature TEXT NOT NULL,
		last_seq BIGINT NOT NULL,
		PRIMARY KEY (federation, anchor_id, root_hash, leaf_index))`,
	`CREATE INDEX IF NOT EXISTS cairn_history_leaves_by_operator
		ON cairn_history_leaves (federation, operator_id, anchor_id)`,
}

// migrate creates the tables, in one transaction so that two replicas starting together
// on one PostgreSQL do not race (the loser's transaction fails and is tried again).
func (s *Store) migrate(ctx context.Context) error {
	var err error
	for range 3 {
		if err = s.inTx(ctx, func(tx *sql.Tx) error {
			for _, stmt := range schema {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			return nil
		}); err == nil {
			return nil
		}
	}
	return err
}

// inTx runs f in a transaction, committed when f returns nil.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// q is query written with ? placeholders, renumbered $1, $2, ... for PostgreSQL. No
// statement of this package has a ? inside a literal.
func (s *Store) q(query string) string {
	if !s.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
