package chain

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

const testSecretHex = cmdtest.SecretHex

func TestChainCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	chain := func(args ...string) (string, int) {
		t.Helper()
		out, err := runCairn(t, append(args, "--db", db, "--secret-hex", testSecretHex)...)
		return out, cmdutil.ExitCode(err)
	}

	if out, code := chain("chain", "seal", "--file", cmdtest.SpansFile(t, dir, 25)); code != cmdutil.ExitOK || !strings.Contains(out, "sealed 25 spans") {
		t.Fatalf("seal: exit %d\n%s", code, out)
	}
	if out, code := chain("chain", "stats"); code != cmdutil.ExitOK || !strings.Contains(out, "entries         25") {
		t.Fatalf("stats: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"chain", "verify"}, {"chain", "verify", "--full"}, {"chain", "verify", "--full", "--range", "5:9"}} {
		if out, code := chain(args...); code != cmdutil.ExitOK || !strings.Contains(out, "valid") {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}

	// Export, then verify the export with the public key, the secret and neither.
	keys := filepath.Join(dir, "keys")
	if _, err := runCairn(t, "keygen", "--output-dir", keys); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "export.json")
	if out, code := chain("export", "--sign-key", filepath.Join(keys, "private.pem"), "--after-seq", "10", "--output", export); code != cmdutil.ExitOK {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	pub := filepath.Join(keys, "public.pem")
	pretty := prettyPrinted(t, export)
	verify := map[string]struct {
		args []string
		want int
	}{
		"public key":     {[]string{"verify-export", export, "--public-key", pub}, cmdutil.ExitOK},
		"secret":         {[]string{"verify-export", export, "--secret-hex", testSecretHex}, cmdutil.ExitOK},
		"pretty-printed": {[]string{"verify-export", pretty, "--public-key", pub, "--secret-hex", testSecretHex}, cmdutil.ExitOK},
		"no trust":       {[]string{"verify-export", export}, cmdutil.ExitMismatch},
		"wrong secret":   {[]string{"verify-export", export, "--secret-hex", strings.Repeat("ab", 32)}, cmdutil.ExitMismatch},
		"missing file":   {[]string{"verify-export", filepath.Join(dir, "nope.json"), "--public-key", pub}, cmdutil.ExitError},
		"not an export":  {[]string{"verify-export", db, "--public-key", pub}, cmdutil.ExitError},
		"no file given":  {[]string{"verify-export"}, cmdutil.ExitUsage},
		"short secret":   {[]string{"verify-export", export, "--secret-hex", "abcd"}, cmdutil.ExitUsage},
	}
	for name, tc := range verify {
		t.Run(name, func(t *testing.T) {
			out, err := runCairn(t, tc.args...)
			if got := cmdutil.ExitCode(err); got != tc.want {
				t.Errorf("exit %d, want %d (%v)\n%s", got, tc.want, err, out)
			}
		})
	}

	// A flipped byte in a stored column is found with its seq.
	sqlDB, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.Exec(`UPDATE chain SET span_name = 'chat gpt-4O' WHERE seq = 7`); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = runCairn(t, "chain", "verify", "--full", "--db", db, "--secret-hex", testSecretHex)
	if cmdutil.ExitCode(err) != cmdutil.ExitMismatch || !strings.Contains(err.Error(), "seq 7") {
		t.Fatalf("verify of a tampered chain: exit %d, %v", cmdutil.ExitCode(err), err)
	}

	for _, args := range [][]string{{"chain", "verify", "--range", "9:5"}, {"chain", "verify", "--range", "x"}, {"export", "--output", export}} {
		if _, code := chain(args...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, cmdutil.ExitUsage)
		}
	}
}

func TestChainSealRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"name\":\"x\",\"colour\":\"red\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runCairn(t, "chain", "seal", "--file", bad, "--db", filepath.Join(dir, "c.db"), "--secret-hex", testSecretHex)
	if cmdutil.ExitCode(err) != cmdutil.ExitError || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("seal of a bad line: exit %d, %v", cmdutil.ExitCode(err), err)
	}
	_, err = runCairn(t, "chain", "seal", "--file", bad, "--db", filepath.Join(dir, "c.db"))
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("seal without a secret: exit %d, %v", cmdutil.ExitCode(err), err)
	}
}

// prettyPrinted writes a copy of the export at path re-indented as `jq .` would lay it
// out, and returns the copy's path.
func prettyPrinted(t *testing.T, path string) string {
	t.Helper()
	compact, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(path, ".json") + "-pretty.json"
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
