package legacydb

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// fuzzColumns are the chain's columns in the order a fuzzed row holds them.
const fuzzColumns = `seq, timestamp_ns, trace_id, span_id, span_name, span_kind, canonical_body, canonical_hash, prev_hash, hmac_hash, semantic_body_hash`

// Mutations a fuzz input applies to a valid chain, each as op, row, column, then payload
// bytes (the op's length byte first).
const (
	opNull = iota
	opInt
	opReal
	opText
	opBlob
	opFlip
	opDelete
	opRenumber
	opUpper
	opReseal
	opCount
)

// FuzzVerify writes a chain whose rows a fuzz input mutated (NULLs, other storage
// classes, flipped bytes, deleted and renumbered rows, rows resealed with the secret) to a
// real SQLite file, and verifies it. Verify must never panic, fail only with a
// *bijotel.RowError or a *ColumnError, and say valid exactly when a plain reference check
// of the stored values (written from LEGACY-BIJOTEL.md §1.5, stricter as the package
// says) passes.
func FuzzVerify(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{opFlip, 2, 6, 1, 40})
	f.Add([]byte{opDelete, 3, 0})
	f.Add([]byte{opDelete, 0, 0, 0, opDelete, 0, 0, 0}) // a trimmed chain
	f.Add([]byte{opRenumber, 4, 0, 1, 130})
	f.Add([]byte{opReal, 1, 1, 1, 7})
	f.Add([]byte{opText, 2, 6, 2, 'h', 'i', opReseal, 2, 0})
	f.Add([]byte{opUpper, 5, 9})
	f.Add([]byte{opNull, 1, 5, 0, opNull, 2, 10, 0})
	secret := bijoteltest.Secret()
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(secret, data)
		path := filepath.Join(t.TempDir(), "chain.db")
		if err := writeFuzzRows(path, rows); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = db.Close() }()
		stored, err := storedRows(db)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := db.Verify(context.Background(), secret, Window{})
		var rowErr *bijotel.RowError
		var colErr *ColumnError
		if err != nil && !errors.As(err, &rowErr) && !errors.As(err, &colErr) {
			t.Fatalf("error of an unknown kind: %v", err)
		}
		if want := referenceValid(secret, stored); (err == nil) != want {
			t.Fatalf("Verify says %v, the reference check valid=%v; rows %q", err, want, stored)
		}
		if err == nil && rep.Checked != int64(len(stored)) {
			t.Fatalf("valid after %d of %d rows", rep.Checked, len(stored))
		}
		// Other windows: no panic, no error of another kind.
		for _, w := range []Window{{LastN: int64(len(data)%5 + 1)}, {SeqStart: 3, SeqEnd: 5}, {SinceNS: bijoteltest.BaseTimeNS + 2e9}} {
			if _, err := db.Verify(context.Background(), secret, w); err != nil && !errors.Is(err, protocol.ErrMismatch) && !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("window %+v: %v", w, err)
			}
		}
	})
}

// fuzzRows is a valid 6-row chain's column values, mutated as data says.
func fuzzRows(secret []byte, data []byte) [][]any {
	var rows [][]any
	for _, r := range bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 6) {
		rows = append(rows, []any{r.Seq, r.TimestampNS, r.TraceID, r.SpanID, r.SpanName, nullable(r.SpanKind),
			r.CanonicalBody, r.CanonicalHash, r.PrevHash, r.HMACHash, nullable(r.SemanticBodyHash)})
	}
	for len(data) >= 3 && len(rows) > 0 {
		op, row, col := int(data[0])%opCount, int(data[1])%len(rows), int(data[2])%11
		data = data[3:]
		var payload []byte
		if op != opDelete && op != opUpper && op != opReseal && len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			payload, data = data[1:1+n], data[1+n:]
		}
		v := &rows[row][col]
		switch op {
		case opNull:
			*v = nil
		case opInt:
			var b [8]byte
			copy(b[:], payload)
			*v = int64(binary.LittleEndian.Uint64(b[:]))
		case opReal:
			*v = float64(len(payload)) + 0.5
		case opText:
			*v = string(payload)
		case opBlob:
			*v = append([]byte{}, payload...)
		case opFlip:
			i := 0
			if len(payload) > 0 {
				i = int(payload[0])
			}
			switch x := (*v).(type) {
			case []byte:
				if len(x) > 0 {
					x = append([]byte{}, x...)
					x[i%len(x)] ^= 1
					*v = x
				}
			case string:
				if len(x) > 0 {
					b := []byte(x)
					b[i%len(b)] ^= 1
					*v = string(b)
				}
			}
		case opDelete:
			rows = append(rows[:row], rows[row+1:]...)
		case opRenumber:
			if seq, ok := rows[row][0].(int64); ok && len(payload) > 0 {
				rows[row][0] = seq + int64(payload[0]) - 128
			}
		case opUpper:
			if s, ok := (*v).(string); ok {
				*v = strings.ToUpper(s)
			}
		case opReseal:
			reseal(secret, rows, row)
		}
	}
	return rows
}

// reseal recomputes canonical_hash, prev_hash and hmac_hash from row on, where the
// values have the types the original writes, as the holder of the secret would.
func reseal(secret []byte, rows [][]any, from int) {
	for i := from; i < len(rows); i++ {
		body, ok := rows[i][6].([]byte)
		if !ok {
			return
		}
		rows[i][7] = bijotel.BodyHash(body)
		if i > 0 {
			rows[i][8] = rows[i-1][9]
		}
		prev, ok := rows[i][8].(string)
		if !ok {
			return
		}
		rows[i][9] = bijotel.RowHMAC(secret, prev, rows[i][7].(string))
	}
}

// writeFuzzRows writes rows into a chain table with the original's columns and types but
// no NOT NULL, so that NULLs can be stored. Rows SQLite refuses (a seq that is not an
// integer or repeats) are left out.
func writeFuzzRows(path string, rows [][]any) error {
	if err := bijoteltest.CreateTable(path, strings.ReplaceAll(bijoteltest.Schema, " NOT NULL", "")); err != nil {
		return err
	}
	db, err := bijoteltest.OpenDB(path)
	if err != nil {
		return err
	}
	for _, r := range rows {
		_, _ = db.Exec(`INSERT INTO chain (`+fuzzColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`, r...)
	}
	return db.Close()
}

// storedRows reads back every row's values as SQLite stored them, in seq order.
func storedRows(db *DB) ([][]any, error) {
	rs, err := db.db.Query(`SELECT ` + fuzzColumns + ` FROM chain ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rs.Close() }()
	var out [][]any
	for rs.Next() {
		r := make([]any, 11)
		dst := make([]any, 11)
		for i := range r {
			dst[i] = &r[i]
		}
		if err := rs.Scan(dst...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// referenceValid checks stored rows from the rules alone: every column of the original's
// type, seqs from 1 (or trusted from a first seq above 1) with no gap, each body's
// SHA-256, each link and each HMAC as lowercase hex.
func referenceValid(secret []byte, rows [][]any) bool {
	isLowerHex := func(v any) bool {
		s, ok := v.(string)
		_, err := hex.DecodeString(s)
		return ok && len(s) == 64 && err == nil && s == strings.ToLower(s)
	}
	var expected string
	var lastSeq int64
	for i, r := range rows {
		seq, ok1 := r[0].(int64)
		_, ok2 := r[1].(int64)
		_, ok3 := r[2].(string)
		_, ok4 := r[3].(string)
		_, ok5 := r[4].(string)
		body, ok6 := r[6].([]byte)
		ch, ok7 := r[7].(string)
		prev, ok8 := r[8].(string)
		hm, ok9 := r[9].(string)
		_, kindText := r[5].(string)
		_, semText := r[10].(string)
		typed := ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9 &&
			(r[5] == nil || kindText) && (r[10] == nil || semText)
		if !typed || seq < 1 {
			return false
		}
		switch {
		case i == 0 && seq == 1:
			expected = bijotel.GenesisHash
		case i == 0:
			if !isLowerHex(prev) {
				return false
			}
			expected = prev
		case seq != lastSeq+1:
			return false
		}
		sum := sha256.Sum256(body)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(prev + ch))
		if hex.EncodeToString(sum[:]) != ch || prev != expected || hex.EncodeToString(mac.Sum(nil)) != hm {
			return false
		}
		expected, lastSeq = hm, seq
	}
	return true
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
