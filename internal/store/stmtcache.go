package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache holds the statements a seal runs in every transaction, prepared once on the
// write pool's one connection: a seal of 1,000 spans runs ten 1,000-parameter INSERTs, ten
// 200-parameter look-ups and ten energy_log INSERTs, and parsing them again in every
// transaction was about a twentieth of its time (docs/BENCHMARKS.md). The connection is
// the transaction's while one is open, so a statement met first inside one is prepared in
// it, and for the cache once the transaction is over (fill).
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]struct{}
}

// maxCachedStmts bounds the cache: the seal asks it only for the statements of full
// chunks and a few fixed ones.
const maxCachedStmts = 16

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: make(map[string]*sql.Stmt), wanted: make(map[string]struct{})}
}

// stmt returns q for use in tx: the cached statement, or one prepared in tx.
func (c *stmtCache) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	st := c.stmts[q]
	if st == nil && len(c.stmts)+len(c.wanted) < maxCachedStmts {
		c.wanted[q] = struct{}{}
	}
	c.mu.Unlock()
	if st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}

// fill prepares the statements met since the last fill; it is called with no
// transaction open. A statement that does not prepare is met again next time.
func (c *stmtCache) fill(ctx context.Context) {
	c.mu.Lock()
	var queries []string
	for q := range c.wanted {
		queries = append(queries, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	// Prepared without the lock: another seal's transaction may hold the connection, and
	// asks for its statements meanwhile.
	for _, q := range queries {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.stmts[q] == nil {
			c.stmts[q] = st
			st = nil
		}
		c.mu.Unlock()
		if st != nil {
			_ = st.Close()
		}
	}
}

// forget drops the cached statements, after a seal failed: a table or index one reads
// may have been dropped by another process, and is created again by the next seal.
func (c *stmtCache) forget() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	clear(c.wanted)
	return errors.Join(errs...)
}
