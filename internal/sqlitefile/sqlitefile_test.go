package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// row is a row of the test table as SQL reads it.
type row struct {
	id   int64
	n    any
	text string
	body []byte
}

// testDB creates a database of the given page size in WAL mode, with checkpoints left to
// the test, and the table t.
func testDB(t testing.TB, pageSize int) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", "file:"+path+fmt.Sprintf("?_pragma=page_size(%d)&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)", pageSize))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, n ANY, text TEXT, body BLOB)`); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// insert adds rows first..last with bodies up to maxBody bytes (some past a page, so
// they overflow) and n of every storage class.
func insert(t testing.TB, db *sql.DB, rng *rand.Rand, first, last int64, maxBody int) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for id := first; id <= last; id++ {
		body := make([]byte, rng.IntN(maxBody+1))
		for i := range body {
			body[i] = byte(rng.IntN(256))
		}
		var n any
		switch id % 6 {
		case 0:
			n = nil
		case 1:
			n = rng.Int64() - rng.Int64()
		case 2:
			n = id % 3 // 0 and 1 have serial types of their own
		case 3:
			n = rng.Float64() * 1e6
		case 4:
			n = -int64(rng.IntN(1 << 20))
		case 5:
			n = "text"
		}
		if _, err := tx.Exec(`INSERT INTO t VALUES (?, ?, ?, ?)`, id, n, fmt.Sprintf("row %d ✓", id), body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// viaSQL reads rows id >= from through SQLite.
func viaSQL(t testing.TB, tx *sql.Tx, from int64) []row {
	t.Helper()
	rows, err := tx.Query(`SELECT id, n, text, body FROM t WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.n, &r.text, &r.body); err != nil {
			t.Fatal(err)
		}
		if r.body == nil {
			r.body = []byte{}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// viaFile reads the same rows with this package, in the read transaction tx holds.
func viaFile(t testing.TB, tx *sql.Tx, path string, from int64) ([]row, error) {
	t.Helper()
	var root uint32
	if err := tx.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 't'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	c, err := f.Seek(root, from)
	if err != nil {
		return nil, err
	}
	var out []row
	cols := make([]Value, 4)
	for c.Next() {
		if _, err := Record(c.Payload(), cols); err != nil {
			return nil, err
		}
		r := row{id: c.Rowid(), text: string(cols[2].Bytes), body: bytes.Clone(cols[3].Bytes)}
		if r.body == nil {
			r.body = []byte{}
		}
		switch v := cols[1]; v.Kind {
		case Integer:
			r.n = v.Int
		case Float:
			r.n = v.Float
		case Text:
			r.n = string(v.Bytes)
		}
		out = append(out, r)
	}
	return out, c.Err()
}

// agree checks that this package reads what SQLite reads, from several starting rowids.
func agree(t *testing.T, db *sql.DB, path string, froms ...int64) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, from := range froms {
		want := viaSQL(t, tx, from)
		got, err := viaFile(t, tx, path, from)
		if err != nil {
			t.Fatalf("from %d: %v", from, err)
		}
		if len(got) != len(want) {
			t.Fatalf("from %d: %d rows, SQLite reads %d", from, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.id != w.id || fmt.Sprintf("%T %v", g.n, g.n) != fmt.Sprintf("%T %v", w.n, w.n) || g.text != w.text || !bytes.Equal(g.body, w.body) {
				t.Fatalf("from %d, row %d:\n got %d %v %q (%d bytes)\nwant %d %v %q (%d bytes)", from, w.id, g.id, g.n, g.text, len(g.body), w.id, w.n, w.text, len(w.body))
			}
		}
	}
}

func TestReadsWhatSQLiteReads(t *testing.T) {
	for _, pageSize := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(pageSize), 1))
			db, path := testDB(t, pageSize)
			agree(t, db, path, 0) // an empty table

			rows := int64(3000 * 4096 / max(pageSize, 4096)) // about 12 MB of bodies
			insert(t, db, rng, 1, rows, 3*pageSize)
			agree(t, db, path, 0, 1, 2, rows/2, rows-1, rows, rows+1) // every page in the log

			mustExec(t, db, `PRAGMA wal_checkpoint(TRUNCATE)`)
			agree(t, db, path, 0, rows/3) // every page in the file, the log empty

			// Some pages in the file, newer versions of others in the log: updates,
			// deletes, a body grown past its page and one shrunk into it.
			mustExec(t, db, `UPDATE t SET text = 'changed' WHERE id % 7 = 0`)
			mustExec(t, db, `DELETE FROM t WHERE id BETWEEN 100 AND 150`)
			mustExec(t, db, `UPDATE t SET body = zeroblob(?) WHERE id = 50`, 5*pageSize)
			mustExec(t, db, `UPDATE t SET body = x'01' WHERE id = 51`)
			insert(t, db, rng, rows+1, rows+500, pageSize/2)
			agree(t, db, path, 0, 100, 151, rows+200)

			mustExec(t, db, `PRAGMA wal_checkpoint(PASSIVE)`)       // backfilled, the log kept
			mustExec(t, db, `DELETE FROM t WHERE id > ?`, rows+400) // truncates the database
			mustExec(t, db, `VACUUM`)
			agree(t, db, path, 0, rows+400)
		})
	}
}

// The property full verification rests on: a row changed through SQL and still only in
// the log is read as changed, not as the database file's older copy says.
func TestReadsTheLogsVersionOfAPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	db, path := testDB(t, 4096)
	insert(t, db, rng, 1, 500, 2000)
	mustExec(t, db, `PRAGMA wal_checkpoint(TRUNCATE)`)
	mustExec(t, db, `UPDATE t SET text = 'tampered' WHERE id = 250`)

	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	got, err := viaFile(t, tx, path, 250)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].text != "tampered" {
		t.Fatalf("row 250 read as %q: the database file's copy, not the log's", got[0].text)
	}
	// An uncommitted frame (a commit torn by a crash) is not read: cut the last frame's
	// commit size to zero, so that the change above is no longer committed.
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	frames := (len(wal) - walHeader) / (frameHeader + 4096)
	copy(wal[walHeader+(frames-1)*(frameHeader+4096)+4:], []byte{0, 0, 0, 0})
	torn := filepath.Join(t.TempDir(), "torn.db")
	copyFile(t, path, torn)
	if err := os.WriteFile(torn+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(torn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if len(f.frames) != 0 {
		t.Fatalf("%d frames read as committed from a log whose only commit is torn", len(f.frames))
	}
}

// A log restarted under a read is caught, not read as the page it was.
func TestALogRestartedUnderTheReadIsChanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	db, path := testDB(t, 4096)
	insert(t, db, rng, 1, 200, 1000)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var root uint32
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 't'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	// What a restart does to every frame: new salts in its header.
	w, err := os.OpenFile(path+"-wal", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for off := range f.frames {
		if _, err := w.WriteAt([]byte{1, 2, 3, 4, 5, 6, 7, 8}, f.frames[off]+8); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	c, err := f.Seek(root, 0)
	for err == nil && c.Next() {
	}
	if err == nil {
		err = c.Err()
	}
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("read on a restarted log: %v", err)
	}
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
