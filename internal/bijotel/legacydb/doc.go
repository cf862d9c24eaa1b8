// Package legacydb reads the chain file of the original product (BIJOTEL 2.16): the SQLite
// table chain that its HMAC-chain processor appends to (LEGACY-BIJOTEL.md §1.1), and
// verifies it by the original's verify_chain rules (§1.5), stricter where the original is
// weak (§5).
//
// It only reads. Open opens the file read-only, with busy_timeout 5000 as the original:
// no WAL switch, no chmod, no schema change, so it can read while the original keeps
// appending; every method reads in one transaction, a consistent snapshot.
//
// Reading is defensive: a column holding what the original never writes (NULL where it
// writes a value, a REAL timestamp, a TEXT body, a seq below 1) is a *ColumnError naming
// the seq, never a panic. canonical_body must be a BLOB: the original writes bytes, and
// its own verifier cannot hash a TEXT body (Python's sqlite3 returns it as str), so a TEXT
// body is refused rather than read as the same bytes. Tables from before
// semantic_body_hash existed are read, with that column NULL.
//
// Verification keeps the original's verdicts and reasons (pkg/bijotel.ChainVerifier) and
// adds, where §5 says the original is weak:
//
//   - a missing row is a failure (ReasonSeqGap), even where the rows around it still link
//     (AUTOINCREMENT never reuses nor skips a seq, so only a deletion or a rewritten seq
//     makes a gap);
//   - a time window (since/until) links its first row to the row before it, not to
//     GENESIS (the original's bug, §5.2), and checks every row from the first to the last
//     in the window, since timestamp_ns is not ordered by seq;
//   - hmac_hash must be 64 lowercase hex digits, as the original's string compare needs.
//
// What no file can show: rows deleted from the end of the chain, and a prefix deleted
// before the first row (its prev_hash is then trusted, as the original trusts it). Only an
// outside record of the head (an export, an anchor) detects those.
package legacydb
