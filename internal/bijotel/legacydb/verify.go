package legacydb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// ReasonSeqGap is the reason of a row whose seq does not follow the row before it by one,
// though its hashes and link pass. The original accepts such a row; Cairn does not, since
// AUTOINCREMENT never skips a seq: a gap is a deleted row or a rewritten seq (seq is not
// under the HMAC). Where the deletion also broke the link, the original's reason is given.
const ReasonSeqGap = "seq gap (a row is missing before this one)"

// ErrWindow is returned for a window that cannot be resolved (a negative bound, an end
// before its start, last_n with other bounds).
var ErrWindow = errors.New("legacydb: bad window")

// Window selects the rows Verify checks, as the original's verify_chain arguments do. A
// zero field is not given.
type Window struct {
	SeqStart, SeqEnd int64 // inclusive seq bounds
	SinceNS, UntilNS int64 // inclusive timestamp_ns bounds
	LastN            int64 // the last N rows; not with any other bound
}

// Link says how the window's first row's prev_hash was checked.
type Link int

const (
	// LinkNone means the window is empty.
	LinkNone Link = iota
	// LinkGenesis means the window starts at seq 1 (or was asked to): prev_hash must be GENESIS.
	LinkGenesis
	// LinkPredecessor means prev_hash was checked against the hmac_hash of the row before the
	// window, which is in this file.
	LinkPredecessor
	// LinkTrusted means no row before the window is in this file (a trimmed or archived chain
	// whose first seq is above 1); the first row's prev_hash is taken from the file
	// unchecked, as the original does ("boundary — predecessor not in this DB").
	LinkTrusted
)

// TailNote says what no verification of the file alone can say.
const TailNote = "rows deleted from the end of the chain cannot be detected from the file alone: compare the head with the last export or anchor"

// Report says what Verify checked. It is returned with a verification failure too.
type Report struct {
	// FirstSeq and LastSeq bound the window verified (0 when it is empty). For a time
	// window they are its first and last row in the time window, and every row between is
	// verified (TimeSpan).
	FirstSeq, LastSeq int64
	// Checked is how many rows passed every check.
	Checked int64
	// Total is how many rows the table holds; TableFirstSeq and TableLastSeq its bounds.
	Total, TableFirstSeq, TableLastSeq int64
	// FirstLink says how the first row's prev_hash was checked; PredecessorSeq is the row
	// it was checked against for LinkPredecessor.
	FirstLink      Link
	PredecessorSeq int64
	// TimeSpan is true for a since/until window; OutsideTime counts the rows verified in
	// it whose timestamp_ns is outside the time window.
	TimeSpan    bool
	OutsideTime int64
	// HeadSeq and HeadHMACHash are the last row that passed and its stored hmac_hash (0
	// and "" when none passed).
	HeadSeq      int64
	HeadHMACHash string
	// Tail is TailNote: whatever passed, rows deleted after the head go unseen.
	Tail string
}

// Verify checks a window of the chain in one read transaction by the original's
// verify_chain rules (pkg/bijotel.ChainVerifier: body hash, link, HMAC, with its reasons),
// stricter where LEGACY-BIJOTEL.md §5 says it is weak (see the package documentation).
//
// The window resolves as the original's (§1.5): LastN starts at the Nth row from the end;
// otherwise SeqStart (default 1) to SeqEnd, and with no SeqStart a chain whose first seq
// is above 1 starts there (trim-aware). SinceNS/UntilNS then narrow it to the first and
// last row whose timestamp_ns is in the time window, and every row between them is
// checked. The first row links to GENESIS when the window starts at seq 1 or below, else
// to the hmac_hash of the nearest row before it in the file, else its prev_hash is
// trusted (LinkTrusted).
//
// A row that fails is a *bijotel.RowError; a column the original never writes, a
// *ColumnError. The report is returned with either. An empty window is a report with
// Checked 0 and no error: nothing was verified. secret must be at least
// bijotel.MinSecretBytes long.
func (db *DB) Verify(ctx context.Context, secret []byte, w Window) (*Report, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	if len(secret) < bijotel.MinSecretBytes {
		return nil, fmt.Errorf("%w: %d bytes, want at least %d", bijotel.ErrSecret, len(secret), bijotel.MinSecretBytes)
	}
	tx, err := db.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	sum, err := db.bounds(ctx, tx)
	if err != nil {
		return nil, err
	}
	rep := &Report{Total: sum.Rows, TableFirstSeq: sum.FirstSeq, TableLastSeq: sum.LastSeq, Tail: TailNote}
	if sum.Rows == 0 {
		return rep, nil
	}
	start, end, err := db.resolve(ctx, tx, w, sum, rep)
	if err != nil || end < start {
		return rep, err
	}
	first, expected, next, err := db.firstLink(ctx, tx, start, end, rep)
	if err != nil || first == 0 {
		return rep, err
	}
	rep.FirstSeq, rep.LastSeq = first, end
	v, err := bijotel.NewChainVerifier(secret, expected)
	if err != nil {
		return rep, err
	}
	err = db.scan(ctx, tx, first, end, func(r *bijotel.Row) error {
		if err := v.Check(r); err != nil {
			return err
		}
		// Stricter than the original: a gap where the link still holds.
		if next != 0 && r.Seq != next {
			return &bijotel.RowError{Seq: r.Seq, Reason: ReasonSeqGap}
		}
		// The original compares hmac_hash as a string: only its own lowercase hex passes.
		if !isHash(r.HMACHash) {
			return &bijotel.RowError{Seq: r.Seq, Reason: bijotel.ReasonHMAC}
		}
		if rep.TimeSpan && (w.SinceNS != 0 && r.TimestampNS < w.SinceNS || w.UntilNS != 0 && r.TimestampNS > w.UntilNS) {
			rep.OutsideTime++
		}
		next = r.Seq + 1
		rep.Checked++
		rep.HeadSeq, rep.HeadHMACHash = r.Seq, r.HMACHash
		return nil
	})
	return rep, err
}

// validate refuses windows the original would resolve surprisingly.
func (w Window) validate() error {
	switch {
	case w.SeqStart < 0 || w.SeqEnd < 0 || w.LastN < 0:
		return fmt.Errorf("%w: negative bound", ErrWindow)
	case w.SeqEnd != 0 && w.SeqStart > w.SeqEnd:
		return fmt.Errorf("%w: seq start %d is after seq end %d", ErrWindow, w.SeqStart, w.SeqEnd)
	case w.SinceNS != 0 && w.UntilNS != 0 && w.SinceNS > w.UntilNS:
		return fmt.Errorf("%w: since is after until", ErrWindow)
	case w.LastN != 0 && (w.SeqStart != 0 || w.SeqEnd != 0 || w.SinceNS != 0 || w.UntilNS != 0):
		return fmt.Errorf("%w: last_n goes with no other bound", ErrWindow)
	}
	return nil
}

// resolve returns the window's first and last seq (end < start for an empty window) and
// notes a time window in rep.
func (db *DB) resolve(ctx context.Context, tx *sql.Tx, w Window, sum Summary, rep *Report) (start, end int64, err error) {
	start, end = w.SeqStart, w.SeqEnd
	switch {
	case w.LastN != 0:
		err = tx.QueryRowContext(ctx, `SELECT seq FROM chain ORDER BY seq DESC LIMIT 1 OFFSET ?`, w.LastN-1).Scan(&start)
		if errors.Is(err, sql.ErrNoRows) {
			start, err = sum.FirstSeq, nil // the chain is shorter than N rows
		}
		if err != nil {
			return 0, 0, db.readErr(err)
		}
	case start == 0:
		start = max(1, sum.FirstSeq) // trim-aware
	}
	if end == 0 {
		end = sum.LastSeq
	}
	if w.SinceNS != 0 || w.UntilNS != 0 {
		// The first and last row in the time window; every row between is verified, since
		// timestamp_ns is not ordered by seq (the original checks only the rows inside,
		// linking the first to GENESIS: §5.2).
		rep.TimeSpan = true
		until := w.UntilNS
		if until == 0 {
			until = 1<<63 - 1
		}
		var lo, hi sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(seq), max(seq) FROM chain
			WHERE seq >= ? AND seq <= ? AND timestamp_ns >= ? AND timestamp_ns <= ?`,
			start, end, w.SinceNS, until).Scan(&lo, &hi); err != nil {
			return 0, 0, db.readErr(err)
		}
		if !lo.Valid {
			return 1, 0, nil
		}
		start, end = lo.Int64, hi.Int64
	}
	return start, end, nil
}

// firstLink finds the window's first row (0 when the window start..end holds none) and
// returns its seq, the prev_hash it must carry, and the seq it must have (0: any, when its
// prev_hash is trusted), and notes which link in rep.
func (db *DB) firstLink(ctx context.Context, tx *sql.Tx, start, end int64, rep *Report) (first int64, expected string, next int64, err error) {
	var prev any
	err = tx.QueryRowContext(ctx, `SELECT seq, prev_hash FROM chain WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT 1`,
		start, end).Scan(&first, &prev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", 0, nil
	}
	if err != nil {
		return 0, "", 0, db.readErr(err)
	}
	if start <= 1 {
		rep.FirstLink = LinkGenesis
		return first, bijotel.GenesisHash, 1, nil
	}
	var pred int64
	var hmacHash any
	err = tx.QueryRowContext(ctx, `SELECT seq, hmac_hash FROM chain WHERE seq < ? ORDER BY seq DESC LIMIT 1`, first).Scan(&pred, &hmacHash)
	switch {
	case err == nil:
		h, err := text(pred, "hmac_hash", hmacHash)
		if err != nil {
			return 0, "", 0, err
		}
		rep.FirstLink, rep.PredecessorSeq = LinkPredecessor, pred
		return first, h, pred + 1, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, "", 0, db.readErr(err)
	}
	// No row before the window in this file: trust the first row's prev_hash, as the
	// original does, but only if it looks like a link.
	p, err := text(first, "prev_hash", prev)
	if err != nil {
		return 0, "", 0, err
	}
	if !isHash(p) {
		return 0, "", 0, &ColumnError{Seq: first, Column: "prev_hash",
			Problem: "is not 64 lowercase hex digits (it would be trusted as the link to rows not in this file)"}
	}
	rep.FirstLink = LinkTrusted
	return first, p, 0, nil
}

// isHash reports whether s is 64 lowercase hex digits, as Python's hexdigest() writes.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
