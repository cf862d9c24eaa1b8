package legacydb

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestIsAndOpen(t *testing.T) {
	dir := t.TempDir()
	legacy := chainFile(t, bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 3), bijoteltest.DBOptions{})
	old := chainFile(t, bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 3), bijoteltest.DBOptions{NoSemanticColumn: true})
	cairn := filepath.Join(dir, "cairn.db")
	s, err := store.Open(cairn, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "export.json")
	empty := filepath.Join(dir, "empty.db")
	otherTable := filepath.Join(dir, "other.db")
	otherColumns := filepath.Join(dir, "columns.db")
	for path, content := range map[string][]byte{export: []byte(`{"version":"1.0"}`), empty: nil} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for path, ddl := range map[string]string{
		otherTable:   `CREATE TABLE spans (seq INTEGER PRIMARY KEY)`,
		otherColumns: `CREATE TABLE chain (seq INTEGER PRIMARY KEY AUTOINCREMENT, timestamp_ns INTEGER, body BLOB)`,
	} {
		if err := bijoteltest.CreateTable(path, ddl); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing.db")

	cases := map[string]struct {
		path    string
		is      bool
		openErr error // nil: Open succeeds
	}{
		"legacy":             {legacy, true, nil},
		"legacy, old table":  {old, true, nil},
		"cairn chain":        {cairn, false, ErrCairnChain},
		"json export":        {export, false, ErrNotLegacy},
		"empty file":         {empty, false, ErrNotLegacy},
		"no chain table":     {otherTable, false, ErrNotLegacy},
		"other chain schema": {otherColumns, false, ErrNotLegacy},
		"missing":            {missing, false, fs.ErrNotExist},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			is, err := Is(tc.path)
			if is != tc.is || (err != nil) != errors.Is(tc.openErr, fs.ErrNotExist) {
				t.Errorf("Is = %v, %v; want %v", is, err, tc.is)
			}
			db, err := Open(tc.path)
			if tc.openErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.openErr) {
				t.Fatalf("Open: %v, want %v", err, tc.openErr)
			}
			if !errors.Is(tc.openErr, fs.ErrNotExist) && !errors.Is(err, protocol.ErrMalformed) {
				t.Errorf("Open: %v does not match protocol.ErrMalformed", err)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Is or Open created %s: %v", missing, err)
	}
}

// TestOpenChangesNothing reads and verifies a file that is not in WAL mode and is
// world-readable: the file's bytes, mode and journal mode stay as they were.
func TestOpenChangesNothing(t *testing.T) {
	secret := bijoteltest.Secret()
	path := chainFile(t, bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 10), bijoteltest.DBOptions{})
	// Back to a rollback journal, as a copy made by an older tool would be; 0644.
	if err := bijoteltest.CreateTable(path, `PRAGMA journal_mode=DELETE`); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Verify(context.Background(), secret, Window{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Summary(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file changed: same bytes %v, mode %v", bytes.Equal(before, after), fi.Mode().Perm())
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("reading left %s%s behind", path, suffix)
		}
	}
}

// TestReadWhileTheOriginalWrites reads while the original's writer holds its write
// transaction open (BEGIN IMMEDIATE, the row inserted, not yet committed): the read does
// not wait and sees the committed chain only.
func TestReadWhileTheOriginalWrites(t *testing.T) {
	secret := bijoteltest.Secret()
	rows := bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 11)
	path := chainFile(t, rows[:10], bijoteltest.DBOptions{})
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()

	writer, err := bijoteltest.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = writer.Close() }()
	tx, err := writer.Begin()
	if err != nil {
		t.Fatal(err)
	}
	r := rows[10]
	if _, err := tx.Exec(`INSERT INTO chain (timestamp_ns, trace_id, span_id, span_name, span_kind, canonical_body,
		canonical_hash, prev_hash, hmac_hash) VALUES (?,?,?,?,?,?,?,?,?)`, r.TimestampNS, r.TraceID, r.SpanID,
		r.SpanName, *r.SpanKind, r.CanonicalBody, r.CanonicalHash, r.PrevHash, r.HMACHash); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Verify(context.Background(), secret, Window{})
	if err != nil || rep.Checked != 10 || rep.Total != 10 {
		t.Fatalf("during the write: %+v, %v", rep, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rep, err = db.Verify(context.Background(), secret, Window{})
	if err != nil || rep.Checked != 11 || rep.HeadSeq != 11 || rep.HeadHMACHash != r.HMACHash {
		t.Fatalf("after the write: %+v, %v", rep, err)
	}
}

func TestSummaryAndScan(t *testing.T) {
	secret := bijoteltest.Secret()
	full := bijoteltest.Chain(secret, 1, bijotel.GenesisHash, 12)
	rows := full[3:] // 4..12, as after archiving 1..3
	path := chainFile(t, rows, bijoteltest.DBOptions{})
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	sum, err := db.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Rows: 9, FirstSeq: 4, LastSeq: 12, FirstPrevHash: full[2].HMACHash, HeadHMACHash: full[11].HMACHash,
		FirstTimestampNS: full[3].TimestampNS, LastTimestampNS: full[11].TimestampNS}
	if sum != want || !db.HasSemanticColumn() {
		t.Errorf("summary %+v, want %+v (semantic column %v)", sum, want, db.HasSemanticColumn())
	}

	for _, tc := range []struct{ from, to, first, last int64 }{{0, 0, 4, 12}, {6, 8, 6, 8}, {10, 0, 10, 12}, {0, 5, 4, 5}, {13, 0, 0, 0}} {
		var got []bijotel.Row
		err := db.Scan(ctx, tc.from, tc.to, func(r *bijotel.Row) error {
			c := *r
			c.CanonicalBody = slices.Clone(r.CanonicalBody)
			if r.SpanKind != nil {
				k := *r.SpanKind
				c.SpanKind = &k
			}
			if r.SemanticBodyHash != nil {
				h := *r.SemanticBodyHash
				c.SemanticBodyHash = &h
			}
			got = append(got, c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var wantRows []bijotel.Row
		if tc.first != 0 {
			wantRows = full[tc.first-1 : tc.last]
		}
		if len(got) != len(wantRows) {
			t.Fatalf("Scan(%d, %d): %d rows, want %d", tc.from, tc.to, len(got), len(wantRows))
		}
		for i := range got {
			if !sameRow(got[i], wantRows[i]) {
				t.Errorf("Scan(%d, %d): row %d is %+v, want %+v", tc.from, tc.to, i, got[i], wantRows[i])
			}
		}
	}

	empty, err := Open(chainFile(t, nil, bijoteltest.DBOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = empty.Close() }()
	if sum, err := empty.Summary(ctx); sum != (Summary{}) || err != nil {
		t.Errorf("summary of an empty table: %+v, %v", sum, err)
	}

	stop := errors.New("stop")
	n := 0
	if err := db.Scan(ctx, 0, 0, func(*bijotel.Row) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Scan with fn failing: %v after %d rows", err, n)
	}
}

func TestScanOldTable(t *testing.T) {
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 3)
	db, err := Open(chainFile(t, rows, bijoteltest.DBOptions{NoSemanticColumn: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if db.HasSemanticColumn() {
		t.Error("an old table has semantic_body_hash")
	}
	err = db.Scan(context.Background(), 0, 0, func(r *bijotel.Row) error {
		if r.SemanticBodyHash != nil || r.SpanKind == nil || *r.SpanKind != *rows[r.Seq-1].SpanKind {
			t.Errorf("seq %d: span_kind %v, semantic_body_hash %v", r.Seq, r.SpanKind, r.SemanticBodyHash)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameRow(a, b bijotel.Row) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Seq == b.Seq && a.TimestampNS == b.TimestampNS && a.TraceID == b.TraceID && a.SpanID == b.SpanID &&
		a.SpanName == b.SpanName && eq(a.SpanKind, b.SpanKind) && bytes.Equal(a.CanonicalBody, b.CanonicalBody) &&
		a.CanonicalHash == b.CanonicalHash && eq(a.SemanticBodyHash, b.SemanticBodyHash) &&
		a.PrevHash == b.PrevHash && a.HMACHash == b.HMACHash
}
