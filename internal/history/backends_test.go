package history

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backend opens a fresh store of one kind for a test.
type backend struct {
	name string
	open func(t *testing.T, o Options) *Store
}

// backends are the databases every store test runs against: SQLite always, PostgreSQL
// when CAIRN_POSTGRES_DSN names one (hack/postgres-up.sh starts it; make test requires
// it with CAIRN_REQUIRE_POSTGRES=1). Each PostgreSQL store gets a schema of its own.
func backends(t *testing.T) []backend {
	t.Helper()
	out := []backend{{name: SQLite, open: func(t *testing.T, o Options) *Store {
		o.Driver, o.DSN = SQLite, filepath.Join(t.TempDir(), "history.db")
		return openStore(t, o)
	}}}
	dsn := os.Getenv("CAIRN_POSTGRES_DSN")
	switch {
	case dsn != "":
		out = append(out, backend{name: Postgres, open: func(t *testing.T, o Options) *Store {
			o.Driver, o.DSN = Postgres, withSchema(t, dsn)
			return openStore(t, o)
		}})
	case os.Getenv("CAIRN_REQUIRE_POSTGRES") != "":
		t.Fatal("CAIRN_REQUIRE_POSTGRES is set but CAIRN_POSTGRES_DSN is not: run hack/postgres-up.sh and source its env file")
	default:
		t.Log("PostgreSQL skipped: CAIRN_POSTGRES_DSN is not set (make test starts one)")
	}
	return out
}

// eachBackend runs f as a subtest against each backend.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func openStore(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// withSchema makes a new schema on the PostgreSQL dsn names, dropped when t ends, and
// returns dsn with that schema as its search path.
func withSchema(t *testing.T, dsn string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "history_test_" + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, err := db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		if err := errors.Join(err, db.Close()); err != nil {
			t.Error(err)
		}
	})
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("PostgreSQL at CAIRN_POSTGRES_DSN: %v", err)
	}
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}
