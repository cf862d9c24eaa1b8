package chain

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// TestChainImportEndToEnd runs what a user migrating from BIJOTEL runs: import, verify the
// new chain, verify the legacy export it binds, import again, and import a changed file.
func TestChainImportEndToEnd(t *testing.T) {
	t.Setenv("CAIRN_HMAC_SECRET", testSecretHex)
	t.Setenv("BIJOTEL_HMAC_SECRET", bijoteltest.SecretHex)
	dir := t.TempDir()
	legacy, into := filepath.Join(dir, "legacy.db"), filepath.Join(dir, "chain.db")
	rows := bijoteltest.Chain(bijoteltest.Secret(), 1, bijotel.GenesisHash, 200)
	if err := bijoteltest.WriteDB(legacy, rows, bijoteltest.DBOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		out, err := runCairn(t, args...)
		if err != nil {
			out += "\nError: " + err.Error()
		}
		if got := cmdutil.ExitCode(err); got != want {
			t.Fatalf("cairn %s: exit %d, want %d\n%s", strings.Join(args, " "), got, want, out)
		}
		return out
	}
	out := run(cmdutil.ExitOK, "chain", "import", "--from", legacy, "--into", into)
	if !strings.Contains(out, "imported 200 legacy rows (seq 1..200) into "+into+" as entries 2..201, behind bridge entry 1") ||
		!strings.Contains(out, "legacy head hmac_hash  "+rows[199].HMACHash) {
		t.Fatalf("import printed:\n%s", out)
	}
	sha := regexp.MustCompile(`\(sha256 ([0-9a-f]{64})\)`).FindStringSubmatch(out)
	if sha == nil {
		t.Fatalf("no export sha256 in:\n%s", out)
	}
	export := filepath.Join(dir, "chain-bijotel-export.json")

	out = run(cmdutil.ExitOK, "chain", "verify", "--full", "--db", into)
	for _, want := range []string{"valid: full verify of seq 1..201, 201 entries checked",
		"import: entries 2..201 are BIJOTEL rows seq 1..200 behind bridge entry 1 (legacy head " + rows[199].HMACHash,
		"their columns match the bridge record's digest", "sha256 " + sha[1]} {
		if !strings.Contains(out, want) {
			t.Errorf("verify lacks %q:\n%s", want, out)
		}
	}
	out = run(cmdutil.ExitOK, "verify-export", export, "--secret-hex", bijoteltest.SecretHex)
	if !strings.Contains(out, sha[1]) {
		t.Errorf("verify-export does not show the export's sha256 %s:\n%s", sha[1], out)
	}

	out = run(cmdutil.ExitOK, "chain", "import", "--from", legacy, "--into", into)
	if !strings.Contains(out, "already imported: "+into+" holds legacy seq 1..200 as entries 2..201; nothing changed") {
		t.Fatalf("second import printed:\n%s", out)
	}
	more := bijoteltest.Chain(bijoteltest.Secret(), 201, rows[199].HMACHash, 3)
	if err := bijoteltest.WriteDB(legacy, more, bijoteltest.DBOptions{}); err != nil {
		t.Fatal(err)
	}
	out = run(cmdutil.ExitMismatch, "chain", "import", "--from", legacy, "--into", into)
	if !strings.Contains(out, "first differing legacy seq 201: the row was added after the import") {
		t.Fatalf("changed file:\n%s", out)
	}

	run(cmdutil.ExitUsage, "chain", "import", "--into", into)
	run(cmdutil.ExitUsage, "chain", "import", "--from", legacy, "--into", filepath.Join(dir, "other.db"), "--legacy-secret-hex", "abcd")
	run(cmdutil.ExitError, "chain", "import", "--from", filepath.Join(dir, "missing.db"), "--into", filepath.Join(dir, "other.db"))
}
