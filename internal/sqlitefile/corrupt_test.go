package sqlitefile

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A file changed anywhere, its log included, is read to an end or an error: never a
// panic, an endless walk or an allocation past the file's size.
func FuzzCorruptFile(f *testing.F) {
	db, path := testDB(f, 512)
	insert(f, db, rand.New(rand.NewPCG(9, 9)), 1, 300, 1500)
	mustExec(f, db, `PRAGMA wal_checkpoint(PASSIVE)`)
	mustExec(f, db, `UPDATE t SET text = 'in the log' WHERE id % 5 = 0`)
	var root uint32
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 't'`).Scan(&root); err != nil {
		f.Fatal(err)
	}
	base, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []struct {
		inLog bool
		off   uint32
		b     []byte
	}{
		{false, 16, []byte{0, 1}},                        // page size 1: 65536
		{false, 28, []byte{0xff, 0xff, 0xff, 0xff}},      // size in pages
		{false, 512 * 1, []byte{0x05, 0, 0, 0xff, 0xff}}, // a page claiming 65535 cells
		{false, 512*2 + 8, []byte{0, 0, 0, 2}},           // a child pointing up the tree
		{false, 512*5 + 100, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{true, 32 + 24 + 3, []byte{0xff, 0xff}},
		{true, 0, []byte{0}},
	} {
		f.Add(seed.inLog, seed.off, seed.b)
	}
	f.Fuzz(func(t *testing.T, inLog bool, off uint32, b []byte) {
		dbBytes, walBytes := append([]byte(nil), base...), append([]byte(nil), wal...)
		target := dbBytes
		if inLog {
			target = walBytes
		}
		if len(target) > 0 {
			copy(target[int(off)%len(target):], b)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "c.db")
		if err := os.WriteFile(p, dbBytes, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+"-wal", walBytes, 0o600); err != nil {
			t.Fatal(err)
		}
		file, err := Open(p)
		if err != nil {
			return
		}
		defer func() { _ = file.Close() }()
		c, err := file.Seek(root, 0)
		if err != nil {
			return
		}
		cols := make([]Value, 4)
		for rows := 0; c.Next(); rows++ {
			if rows > 1_000_000 {
				t.Fatal("more rows than the file can hold: a loop")
			}
			_, _ = Record(c.Payload(), cols)
		}
	})
}
