package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Stats describes the chain as stored.
type Stats struct {
	// Entries is the number of rows; FirstSeq and LastSeq are the lowest and highest seq
	// (all 0 for an empty chain). An unbroken chain has Entries == LastSeq and FirstSeq 1.
	// The JSON names are those of GET /api/chain/stats (cairn chain stats --json).
	Entries  int64 `json:"entries"`
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
	// LastHMACHash is the hmac_hash of row LastSeq.
	LastHMACHash string `json:"last_hmac_hash"`
	// FirstTimestampNS and LastTimestampNS are the timestamp_ns of rows FirstSeq and LastSeq.
	FirstTimestampNS int64 `json:"first_timestamp_ns"`
	LastTimestampNS  int64 `json:"last_timestamp_ns"`
	// FileBytes is the size of the database file plus its write-ahead log.
	FileBytes int64 `json:"file_bytes"`
}

// Stats reads the chain's size and ends in one read transaction. Counting the rows reads
// every page of the table, so it takes time in proportion to the chain's size (see
// docs/BENCHMARKS.md); StatsBySeq does not count.
func (s *Store) Stats(ctx context.Context) (Stats, error) { return s.stats(ctx, true) }

// StatsBySeq is Stats in constant time: Entries is LastSeq − FirstSeq + 1, what the
// chain's ends claim, not a count of its rows (only verification finds a row missing).
func (s *Store) StatsBySeq(ctx context.Context) (Stats, error) { return s.stats(ctx, false) }

// stats is Stats, counting the rows when count is set.
func (s *Store) stats(ctx context.Context, count bool) (Stats, error) {
	var st Stats
	tx, err := s.readTx(ctx)
	if err != nil {
		return st, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	query := `SELECT count(*), coalesce(min(seq), 0), coalesce(max(seq), 0) FROM chain`
	if !count { // each subquery's lone min or max reads one row of the rowid's b-tree
		query = `SELECT coalesce(hi - lo + 1, 0), coalesce(lo, 0), coalesce(hi, 0) FROM
			(SELECT (SELECT min(seq) FROM chain) AS lo, (SELECT max(seq) FROM chain) AS hi)`
	}
	if err := tx.QueryRowContext(ctx, query).Scan(&st.Entries, &st.FirstSeq, &st.LastSeq); err != nil {
		return st, fmt.Errorf("chain stats: %w", err)
	}
	if st.Entries > 0 {
		if err := tx.QueryRowContext(ctx, `SELECT timestamp_ns FROM chain WHERE seq = ?`, st.FirstSeq).Scan(&st.FirstTimestampNS); err != nil {
			return st, fmt.Errorf("chain stats: %w", err)
		}
		err := tx.QueryRowContext(ctx, `SELECT timestamp_ns, hmac_hash FROM chain WHERE seq = ?`, st.LastSeq).Scan(&st.LastTimestampNS, &st.LastHMACHash)
		if err != nil {
			return st, fmt.Errorf("chain stats: %w", err)
		}
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return st, fmt.Errorf("chain stats: %w", err)
		}
		st.FileBytes += fi.Size()
	}
	return st, nil
}
