package store

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// tamperChain is how long the chains tampered with are; tampered is the row changed.
const (
	tamperChain = 1200 // more than two batches of rows
	tampered    = 700
)

// rawDB opens the chain file with plain SQL, as someone editing it by hand would (without
// waiting for the disk at each commit: the tests make hundreds of edits).
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func execSQL(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		t.Fatalf("%s: %d rows changed, %v", query, n, err)
	}
}

// flipText changes one character of column at seq to another character of the same
// kind, so that hex stays hex: the row keeps its shape and the change is found by the
// check that compares it.
func flipText(t *testing.T, db *sql.DB, column string, seq int64) {
	t.Helper()
	var v []byte
	if err := db.QueryRow(fmt.Sprintf("SELECT %s FROM chain WHERE seq = ?", column), seq).Scan(&v); err != nil {
		t.Fatal(err)
	}
	i := len(v) / 2
	if v[i] == '0' {
		v[i] = '1'
	} else {
		v[i] = '0'
	}
	if column == "canonical_body" {
		execSQL(t, db, "UPDATE chain SET canonical_body = ? WHERE seq = ?", v, seq)
		return
	}
	execSQL(t, db, fmt.Sprintf("UPDATE chain SET %s = ? WHERE seq = ?", column), string(v), seq)
}

// readEntry reads row seq through the store's own scanner.
func readEntry(t *testing.T, db *sql.DB, seq int64) protocol.Entry {
	t.Helper()
	rows, err := db.Query(selectRows, seq, seq)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var e protocol.Entry
	if !rows.Next() {
		t.Fatalf("no row %d", seq)
	}
	if err := scanEntry(rows, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// writeEntry overwrites row seq with the columns of e.
func writeEntry(t *testing.T, db *sql.DB, seq int64, e *protocol.Entry) {
	t.Helper()
	execSQL(t, db, `UPDATE chain SET timestamp_ns = ?, trace_id = ?, span_id = ?, span_name = ?, span_kind = ?,
		canonical_body = ?, canonical_hash = ?, prev_hash = ?, hmac_hash = ? WHERE seq = ?`,
		e.TimestampNS, e.TraceID, e.SpanID, e.SpanName, e.SpanKind, e.CanonicalBody, e.CanonicalHash, e.PrevHash, e.HMACHash, seq)
}

// tamperCase is one way of editing a chain file by hand, and what Verify must report.
type tamperCase struct {
	name   string
	tamper func(t *testing.T, db *sql.DB)
	reason string
	seq    int64 // the seq reported; 0 means at
	last   int64 // the last row changed; 0 means seq
}

// tamperCases are the edits tried on a chain of tamperChain rows, at row at where the edit
// has a place of its own (some change row 1 or the last row wherever at is).
func tamperCases(at int64) []tamperCase {
	return []tamperCase{
		{"trace_id", func(t *testing.T, db *sql.DB) { flipText(t, db, "trace_id", at) }, protocol.ReasonColumn, 0, 0},
		{"span_id", func(t *testing.T, db *sql.DB) { flipText(t, db, "span_id", at) }, protocol.ReasonColumn, 0, 0},
		{"span_name", func(t *testing.T, db *sql.DB) { flipText(t, db, "span_name", at) }, protocol.ReasonColumn, 0, 0},
		{"span_kind", func(t *testing.T, db *sql.DB) { flipText(t, db, "span_kind", at) }, protocol.ReasonColumn, 0, 0},
		{"timestamp_ns", func(t *testing.T, db *sql.DB) {
			execSQL(t, db, "UPDATE chain SET timestamp_ns = timestamp_ns + 1 - 2 * (timestamp_ns & 1) WHERE seq = ?", at)
		}, protocol.ReasonColumn, 0, 0},
		{"canonical_body", func(t *testing.T, db *sql.DB) { flipText(t, db, "canonical_body", at) }, protocol.ReasonBodyHash, 0, 0},
		{"canonical_hash", func(t *testing.T, db *sql.DB) { flipText(t, db, "canonical_hash", at) }, protocol.ReasonBodyHash, 0, 0},
		{"prev_hash", func(t *testing.T, db *sql.DB) { flipText(t, db, "prev_hash", at) }, protocol.ReasonLink, 0, 0},
		{"hmac_hash", func(t *testing.T, db *sql.DB) { flipText(t, db, "hmac_hash", at) }, protocol.ReasonHMAC, 0, 0},
		{"hmac_hash of row 1", func(t *testing.T, db *sql.DB) { flipText(t, db, "hmac_hash", 1) }, protocol.ReasonHMAC, 1, 0},
		{"hmac_hash of the last row", func(t *testing.T, db *sql.DB) { flipText(t, db, "hmac_hash", tamperChain) }, protocol.ReasonHMAC, tamperChain, 0},
		{"malformed trace_id", func(t *testing.T, db *sql.DB) {
			execSQL(t, db, "UPDATE chain SET trace_id = upper(trace_id) || 'x' WHERE seq = ?", at)
		}, protocol.ReasonMalformed, 0, 0},
		{"deleted row", func(t *testing.T, db *sql.DB) { execSQL(t, db, "DELETE FROM chain WHERE seq = ?", at) }, protocol.ReasonSeq, 0, 0},
		{"deleted row 1", func(t *testing.T, db *sql.DB) { execSQL(t, db, "DELETE FROM chain WHERE seq = 1") }, protocol.ReasonSeq, 1, 0},
		{"swapped rows", func(t *testing.T, db *sql.DB) {
			a, b := readEntry(t, db, at), readEntry(t, db, at+300)
			writeEntry(t, db, at, &b)
			writeEntry(t, db, at+300, &a)
		}, protocol.ReasonLink, 0, at + 300},
		{"swapped neighbours", func(t *testing.T, db *sql.DB) {
			a, b := readEntry(t, db, at), readEntry(t, db, at+1)
			writeEntry(t, db, at, &b)
			writeEntry(t, db, at+1, &a)
		}, protocol.ReasonLink, 0, at + 1},
		{"HMAC recomputed with another secret", func(t *testing.T, db *sql.DB) {
			e := readEntry(t, db, at)
			execSQL(t, db, "UPDATE chain SET hmac_hash = ? WHERE seq = ?", protocol.EntryHMAC(otherSecret, e.PrevHash, e.CanonicalHash), at)
		}, protocol.ReasonHMAC, 0, 0},
		{"forged body, everything after it recomputed with another secret", func(t *testing.T, db *sql.DB) {
			forgeFrom(t, db, at)
		}, protocol.ReasonHMAC, 0, tamperChain},
	}
}

func TestTamperingIsFoundAtItsSeq(t *testing.T) {
	for _, c := range tamperCases(tampered) {
		t.Run(c.name, func(t *testing.T) {
			s, path := newStore(t)
			seal(t, s, tamperChain, 1000)
			c.tamper(t, rawDB(t, path))
			seq := c.seq
			if seq == 0 {
				seq = tampered
			}
			_, err := s.Verify(t.Context(), VerifyOptions{Full: true})
			wantEntryError(t, err, seq, c.reason)
			if errors.Is(err, ErrWrongSecret) {
				t.Errorf("tampering reported as a wrong secret: %v", err)
			}
			// A window starting after the rows changed does not see them, except for the
			// link of its first row.
			if last := max(c.last, seq); last+2 <= tamperChain {
				if _, err := s.Verify(t.Context(), VerifyOptions{Full: true, From: last + 2}); err != nil {
					t.Errorf("window after the rows changed: %v", err)
				}
			}
			// A smoke verification of a window starting at the first row changed finds it.
			_, err = s.Verify(t.Context(), VerifyOptions{From: seq})
			wantEntryError(t, err, seq, c.reason)
			if errors.Is(err, ErrWrongSecret) {
				t.Errorf("smoke: tampering reported as a wrong secret: %v", err)
			}
			if _, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey}); err == nil {
				t.Error("a tampered chain was exported")
			}
		})
	}
}

// forgeFrom rewrites row seq's body and recomputes its hashes, and those of every row
// after it, with another secret: a forger without the secret.
func forgeFrom(t *testing.T, db *sql.DB, seq int64) {
	t.Helper()
	prev := readEntry(t, db, seq-1).HMACHash
	for i := seq; i <= tamperChain; i++ {
		body := testBody(i)
		if i == seq {
			body.Attributes["gen_ai.request.model"] = "forged"
		}
		e, err := protocol.NewEntry(otherSecret, i, prev, body)
		if err != nil {
			t.Fatal(err)
		}
		writeEntry(t, db, i, e)
		prev = e.HMACHash
	}
}

func TestWrongSecret(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, tamperChain, 1000)
	wrong := openStore(t, path, otherSecret)
	for _, o := range []VerifyOptions{{Full: true}, {}, {Full: true, From: tampered}, {From: tampered, To: tampered}, {From: tamperChain}} {
		_, err := wrong.Verify(t.Context(), o)
		if !errors.Is(err, ErrWrongSecret) {
			t.Errorf("%+v: got %v, want a wrong secret", o, err)
		}
		wantEntryError(t, err, max(o.From, 1), protocol.ReasonHMAC)
	}
	if _, err := wrong.Export(t.Context(), discard{}, ExportOptions{Key: testKey}); !errors.Is(err, ErrWrongSecret) {
		t.Errorf("export: got %v, want a wrong secret", err)
	}
}

func TestTamperingWithoutTheSecret(t *testing.T) {
	s, path := newStore(t)
	seal(t, s, tamperChain, 1000)
	flipText(t, rawDB(t, path), "hmac_hash", tampered)
	ro := openStore(t, path, nil)
	_, err := ro.Verify(t.Context(), VerifyOptions{Full: true})
	// Without the secret the altered hmac_hash is found by the next row's link.
	wantEntryError(t, err, tampered+1, protocol.ReasonLink)
}

// discard is an io.Writer that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
