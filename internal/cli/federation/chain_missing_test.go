package federation

import (
	"database/sql"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// TestMissingChainIsAnErrorAndNothingIsCreated is the attack of issue 33: `cairn chain
// verify --db <missing file>` created an empty chain and printed "valid", exit 0, so a
// typo in a cron line or a chain deleted by mistake read as a chain that verifies. Every
// command that reads a chain through --db must say the file does not exist (exit 1) and
// leave nothing behind; only `chain seal` and `chain import` (and `cairn serve`) create
// one.
func TestMissingChainIsAnErrorAndNothingIsCreated(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "private.pem")
	if out, err := runCairn(t, "keygen", "--output-dir", dir); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{
		"chain verify":            {"chain", "verify"},
		"chain verify --full":     {"chain", "verify", "--full"},
		"chain verify, no secret": {"chain", "verify", "-"},
		"chain stats":             {"chain", "stats"},
		"export":                  {"export", "--sign-key", key, "--output", filepath.Join(dir, "export.json")},
		"energy backfill":         {"energy", "backfill"},
		"energy summary":          {"energy", "summary"},
		"regression":              {"regression"},
		"regression --no-save":    {"regression", "--no-save", "-"},
		"replay":                  {"replay", "--seq", "1", "--output", "x", "-"},
	} {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".db")
			if args[len(args)-1] == "-" { // without the secret
				args = append(args[:len(args)-1], "--db", db)
			} else {
				args = append(args, "--db", db, "--secret-hex", testSecretHex)
			}
			out, err := runCairn(t, args...)
			if code := cmdutil.ExitCode(err); code != cmdutil.ExitError {
				t.Errorf("exit %d, want %d (the chain does not exist)\n%s", code, cmdutil.ExitError, out)
			}
			if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), db) {
				t.Errorf("error %v: want one that names %s and says it does not exist", err, db)
			}
			if strings.Contains(out, "valid") {
				t.Errorf("a missing chain was reported valid:\n%s", out)
			}
			for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
				if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s was created (stat: %v)", f, err)
				}
			}
		})
	}
}

// TestSubmitOfAMissingChainIsAnError: `federation submit --db` of a chain that does not
// exist says so and creates nothing (it used to export an empty chain it had made).
func TestSubmitOfAMissingChainIsAnError(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["GET /federation/operator/"+id] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "submissions": []map[string]any{}})
	}
	db := filepath.Join(dir, "chain.db")
	out, err := runCairn(t, "federation", "submit", "--dry-run", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv, "--db", db, "--secret-hex", testSecretHex)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError || err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("submit of a missing chain: exit %d, %v\n%s", code, err, out)
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was created (stat: %v)", db, err)
	}
}

// TestChainOnAnotherDatabaseIsLeftAlone: verifying an SQLite file that holds no chain
// table says so and adds none, with the secret too (the store used to create its table
// in whatever file --db named).
func TestChainOnAnotherDatabaseIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "other.db")
	if out, err := runCairn(t, "chain", "seal", "--db", db, "--secret-hex", testSecretHex, "--file", cmdtest.SpansFile(t, dir, 1)); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	dropChainTable(t, db)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCairn(t, "chain", "verify", "--db", db, "--secret-hex", testSecretHex)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError || err == nil || !strings.Contains(err.Error(), "no chain table") {
		t.Errorf("verify of a database without a chain: exit %d, %v\n%s", code, err, out)
	}
	if after, err := os.ReadFile(db); err != nil || string(after) != string(before) {
		t.Errorf("verify changed a database that holds no chain (read: %v)", err)
	}
}

// dropChainTable leaves db an SQLite database without a chain table.
func dropChainTable(t *testing.T, db string) {
	t.Helper()
	sqlDB, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sqlDB.Close() }()
	for _, q := range []string{`DROP TABLE chain`, `PRAGMA journal_mode=DELETE`} {
		if _, err := sqlDB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
