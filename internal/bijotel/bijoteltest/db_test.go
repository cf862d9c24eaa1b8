package bijoteltest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// TestWriteDB checks the file WriteDB makes is laid out as the original's: AUTOINCREMENT,
// both indexes (one for the older table), WAL, mode 0600, rows under their own seqs.
func TestWriteDB(t *testing.T) {
	rows := Chain(Secret(), 1, bijotel.GenesisHash, 9)[4:] // 5..9: a trimmed chain
	for name, o := range map[string]DBOptions{"current": {}, "old": {NoSemanticColumn: true}} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chain.db")
			if err := WriteDB(path, rows, o); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v", fi.Mode(), err)
			}
			head := make([]byte, 20)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Read(head)
			_ = f.Close()
			if err != nil || head[18] != 2 || head[19] != 2 { // file format 2: WAL
				t.Fatalf("not in WAL mode: header %v, %v", head, err)
			}
			db, err := OpenDB(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			var table string
			var indexes []string
			var seqs []int64
			var next int64
			if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'chain'`).Scan(&table); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'chain'`).Scan(&next); err != nil {
				t.Fatal(err)
			}
			for q, dst := range map[string]any{
				`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'chain' ORDER BY name`: &indexes,
				`SELECT seq FROM chain ORDER BY seq`: &seqs,
			} {
				rs, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				for rs.Next() {
					switch d := dst.(type) {
					case *[]string:
						var s string
						err = rs.Scan(&s)
						*d = append(*d, s)
					case *[]int64:
						var n int64
						err = rs.Scan(&n)
						*d = append(*d, n)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				_ = rs.Close()
			}
			wantIndexes := []string{"idx_chain_semhash", "idx_chain_trace"}
			if o.NoSemanticColumn {
				wantIndexes = wantIndexes[1:]
			}
			if !strings.Contains(table, "seq INTEGER PRIMARY KEY AUTOINCREMENT") ||
				strings.Contains(table, "semantic_body_hash") == o.NoSemanticColumn ||
				!slices.Equal(indexes, wantIndexes) || !slices.Equal(seqs, []int64{5, 6, 7, 8, 9}) || next != 9 {
				t.Errorf("table %s\nindexes %v, seqs %v, sqlite_sequence %d", table, indexes, seqs, next)
			}
		})
	}
}
