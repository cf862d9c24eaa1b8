package chain

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// tamperedChain seals 26 spans into a new chain and changes one character of entry 10's
// body in the SQLite file, as someone editing it by hand would. It returns the chain's path.
func tamperedChain(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 26), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }()
	res, err := raw.Exec(`UPDATE chain SET canonical_body = CAST(replace(CAST(canonical_body AS TEXT), '"n":10', '"n":11') AS BLOB) WHERE seq = 10`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("tamper: %d rows changed, %v", n, err)
	}
	return db
}

// TestChainVerifyChecksEveryEntryByDefault is finding 1 of issue 34: with entry 10 of 26
// edited, `cairn chain verify` printed "valid: smoke verify of seq 1..26, 2 entries
// checked" and exited 0. The default now checks every entry.
func TestChainVerifyChecksEveryEntryByDefault(t *testing.T) {
	db := tamperedChain(t)
	for _, args := range [][]string{{}, {"--full"}, {"--range", "5:20"}} {
		out, err := runCairn(t, append([]string{"chain", "verify", "--db", db, "--secret-hex", testSecretHex}, args...)...)
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitMismatch {
			t.Errorf("%v: exit %d, want %d (entry 10 was edited)\n%s", args, code, cmdutil.ExitMismatch, out)
		}
		if err == nil || !strings.Contains(err.Error(), "seq 10") {
			t.Errorf("%v: error %v does not name seq 10", args, err)
		}
		if strings.Contains(out, "valid") {
			t.Errorf("%v: a tampered chain was reported valid:\n%s", args, out)
		}
	}
	// Without the secret the body hash still finds it.
	if _, err := runCairn(t, "chain", "verify", "--db", db); cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(err.Error(), "seq 10") {
		t.Errorf("without the secret: %v", err)
	}
}

// TestChainVerifySmokeNeverSaysValid: the quick check says what it checked and what it
// did not, and never "valid", on an intact chain or on one it cannot see the damage of.
func TestChainVerifySmokeNeverSaysValid(t *testing.T) {
	db := tamperedChain(t)
	for _, args := range [][]string{{}, {"--range", "3:7"}, {"--range", "26:26"}, {"--last", "5"}} {
		out, err := runCairn(t, append([]string{"chain", "verify", "--smoke", "--db", db, "--secret-hex", testSecretHex}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if strings.Contains(strings.ToLower(out), "valid") {
			t.Errorf("%v: smoke output says valid:\n%s", args, out)
		}
		if !strings.Contains(out, "not checked") || !strings.Contains(out, "without --smoke") {
			t.Errorf("%v: smoke output does not say what it did not check:\n%s", args, out)
		}
	}
	out, err := runCairn(t, "chain", "verify", "--smoke", "--db", db, "--secret-hex", testSecretHex)
	if err != nil || !strings.Contains(out, "seq 1 and 26") || !strings.Contains(out, "24 entries not checked") {
		t.Errorf("smoke of 1..26: %v\n%s", err, out)
	}
	if _, err := runCairn(t, "chain", "verify", "--smoke", "--full", "--db", db); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--smoke --full: %v, want a usage error", err)
	}
}

// verifyDoc is the JSON document of `cairn chain verify --json`, as a script reads it.
type verifyDoc struct {
	Valid         bool   `json:"valid"`
	Status        string `json:"status"`
	Mode          string `json:"mode"`
	Format        string `json:"format"`
	From          int64  `json:"first_seq"`
	To            int64  `json:"last_seq"`
	Checked       int64  `json:"entries_verified"`
	NotChecked    int64  `json:"entries_not_checked"`
	CheckedRanges []struct {
		First int64 `json:"first_seq"`
		Last  int64 `json:"last_seq"`
	} `json:"checked_ranges"`
	HMACsChecked bool `json:"hmacs_checked"`
	FirstFailure *struct {
		Seq     int64  `json:"seq"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"first_failure"`
	WrongSecret bool            `json:"wrong_secret"`
	Error       string          `json:"error"`
	ElapsedMS   float64         `json:"elapsed_ms"`
	Import      json.RawMessage `json:"import"`
	Legacy      json.RawMessage `json:"bijotel"`
}

func verifyJSON(t *testing.T, args ...string) (verifyDoc, int) {
	t.Helper()
	out, err := runCairn(t, append([]string{"chain", "verify", "--json"}, args...)...)
	var doc verifyDoc
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if jerr := dec.Decode(&doc); jerr != nil {
		t.Fatalf("%v: output is not one JSON document (%v):\n%s", args, jerr, out)
	}
	if dec.More() {
		t.Fatalf("%v: more than one document:\n%s", args, out)
	}
	return doc, cmdutil.ExitCode(err)
}

// TestChainVerifyJSON: --json prints one snake_case document in every outcome.
func TestChainVerifyJSON(t *testing.T) {
	db := tamperedChain(t)
	with := []string{"--db", db, "--secret-hex", testSecretHex}

	doc, code := verifyJSON(t, with...)
	if code != cmdutil.ExitMismatch || doc.Valid || doc.Status != "invalid" || doc.Mode != "full" || doc.FirstFailure == nil ||
		doc.FirstFailure.Seq != 10 || doc.FirstFailure.Reason != "body_hash_mismatch" || doc.Checked != 9 ||
		len(doc.CheckedRanges) != 1 || doc.CheckedRanges[0].First != 1 || doc.CheckedRanges[0].Last != 9 || doc.NotChecked != 16 {
		t.Errorf("tampered, full: exit %d, %+v", code, doc)
	}

	doc, code = verifyJSON(t, append(with, "--range", "11:26")...)
	if code != cmdutil.ExitOK || !doc.Valid || doc.Status != "valid" || doc.From != 11 || doc.To != 26 || doc.Checked != 16 ||
		doc.NotChecked != 0 || !doc.HMACsChecked || doc.FirstFailure != nil {
		t.Errorf("intact window: exit %d, %+v", code, doc)
	}

	doc, code = verifyJSON(t, append(with, "--smoke")...)
	if code != cmdutil.ExitOK || doc.Valid || doc.Status != "smoke_passed" || doc.Mode != "smoke" || doc.Checked != 2 ||
		doc.NotChecked != 24 || len(doc.CheckedRanges) != 2 || doc.CheckedRanges[0].First != 1 || doc.CheckedRanges[1].First != 26 {
		t.Errorf("smoke: exit %d, %+v", code, doc)
	}

	doc, code = verifyJSON(t, "--db", filepath.Join(t.TempDir(), "missing.db"))
	if code != cmdutil.ExitError || doc.Valid || doc.Status != "error" || !strings.Contains(doc.Error, "does not exist") {
		t.Errorf("missing chain: exit %d, %+v", code, doc)
	}

	doc, code = verifyJSON(t, append(with, "--range", "9:3")...)
	if code != cmdutil.ExitUsage || doc.Valid || doc.Status != "error" || doc.Error == "" {
		t.Errorf("bad range: exit %d, %+v", code, doc)
	}
}

// TestChainVerifyJSONOfABIJOTELFile: a file of the original product, always verified in
// full, has the same document, its failure named with the original's reason; --smoke is
// refused rather than ignored.
func TestChainVerifyJSONOfABIJOTELFile(t *testing.T) {
	path := legacyChain(t, 1)
	secret := []string{"--db", path, "--secret-hex", bijoteltest.SecretHex}
	doc, code := verifyJSON(t, secret...)
	if code != cmdutil.ExitOK || !doc.Valid || doc.Format != "bijotel" || doc.Mode != "full" || doc.Checked != 20 || doc.To != 20 {
		t.Errorf("intact: exit %d, %+v", code, doc)
	}
	if err := bijoteltest.FlipBodyByte(path, 7); err != nil {
		t.Fatal(err)
	}
	doc, code = verifyJSON(t, secret...)
	if code != cmdutil.ExitMismatch || doc.Valid || doc.Status != "invalid" || doc.FirstFailure == nil || doc.FirstFailure.Seq != 7 ||
		doc.FirstFailure.Reason != bijotel.ReasonBodyHash || doc.Checked != 6 {
		t.Errorf("tampered: exit %d, %+v", code, doc)
	}
	if out, err := runCairn(t, append([]string{"chain", "verify", "--smoke"}, secret...)...); cmdutil.ExitCode(err) != cmdutil.ExitUsage || strings.Contains(out, "valid") {
		t.Errorf("--smoke on a BIJOTEL file: %v\n%s", err, out)
	}
}

// A chain file cut short (a disk filled, a copy interrupted) is reported as the chain that
// does not open, in the command's words, not as the BIJOTEL probe's ("legacydb: open").
func TestChainVerifyOfATruncatedFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if out, err := runCairn(t, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 400), "--db", db, "--secret-hex", testSecretHex); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	if err := os.Truncate(db, 8192); err != nil {
		t.Fatal(err)
	}
	_, err := runCairn(t, "chain", "verify", "--db", db, "--secret-hex", testSecretHex)
	if err == nil || cmdutil.ExitCode(err) == 0 {
		t.Fatal("a truncated chain verified")
	}
	if msg := err.Error(); strings.Contains(msg, "legacydb") || !strings.Contains(msg, db) {
		t.Errorf("error %q: want the chain's path, in the command's words", msg)
	}
}
