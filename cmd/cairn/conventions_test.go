package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clitest"
)

func TestUnknownSubcommandIsAUsageError(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"federation", "sumbit"}, "submit"},
		{[]string{"chain", "bogus"}, ""},
		{[]string{"chain", "verfy"}, "verify"},
		{[]string{"bogus"}, ""},
		{[]string{"completion", "bsh"}, "bash"},
	} {
		r := clitest.Run(t, nil, nil, tc.args...)
		if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, `unknown command "`+tc.args[len(tc.args)-1]+`"`) {
			t.Errorf("cairn %s: exit %d, want %d and an unknown command\nstdout: %s\nstderr: %s",
				strings.Join(tc.args, " "), r.Code, cmdutil.ExitUsage, r.Stdout, r.Stderr)
		}
		if tc.suggest != "" && !strings.Contains(r.Stderr, "Did you mean this?\n\t"+tc.suggest) {
			t.Errorf("cairn %s does not suggest %s:\n%s", strings.Join(tc.args, " "), tc.suggest, r.Stderr)
		}
		if r.Stdout != "" {
			t.Errorf("cairn %s printed on stdout:\n%s", strings.Join(tc.args, " "), r.Stdout)
		}
	}
	// A group alone still prints its help.
	if r := clitest.Run(t, nil, nil, "federation"); r.Code != cmdutil.ExitOK || !strings.Contains(r.Stdout, "Available Commands") {
		t.Errorf("cairn federation: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestVersionFlag: cairn --version prints what cairn version does.
func TestVersionFlag(t *testing.T) {
	want := clitest.Run(t, nil, nil, "version")
	got := clitest.Run(t, nil, nil, "--version")
	if got.Code != cmdutil.ExitOK || want.Code != cmdutil.ExitOK || got.Stdout != want.Stdout {
		t.Fatalf("cairn --version: exit %d, %q (%s); cairn version: %q", got.Code, got.Stdout, got.Stderr, want.Stdout)
	}
}

// TestChainStatsJSONIsSnakeCase: chain stats --json names its members as the rest of
// Cairn's JSON does.
func TestChainStatsJSONIsSnakeCase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	if r := clitest.Run(t, nil, nil, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 3), "--db", db, "--secret-hex", testSecretHex); r.Code != 0 {
		t.Fatalf("seal: %s", r.Stderr)
	}
	r := clitest.Run(t, nil, nil, "chain", "stats", "--json", "--db", db)
	doc := cmdtest.OneJSONDocument(t, "chain stats --json", r.Stdout)
	cmdtest.SnakeKeys(t, "chain stats --json", doc)
	if doc["first_seq"] != 1.0 || doc["last_seq"] != 3.0 || doc["entries"] != 3.0 {
		t.Errorf("chain stats --json: %v", doc)
	}
}

// TestKeygenAndVerifyExportJSON: keygen --json and verify-export --json print one
// snake_case document each.
func TestKeygenAndVerifyExportJSON(t *testing.T) {
	dir := t.TempDir()
	r := clitest.Run(t, nil, nil, "keygen", "--json", "--output-dir", filepath.Join(dir, "keys"))
	key := cmdtest.OneJSONDocument(t, "keygen --json", r.Stdout)
	cmdtest.SnakeKeys(t, "keygen --json", key)
	id, _ := key["operator_id"].(string)
	if r.Code != 0 || !strings.HasPrefix(id, "op_") || key["private_key"] != filepath.Join(dir, "keys", "private.pem") {
		t.Fatalf("keygen --json: exit %d %v\n%s", r.Code, key, r.Stderr)
	}

	db := filepath.Join(dir, "chain.db")
	if r := clitest.Run(t, nil, nil, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 3), "--db", db, "--secret-hex", testSecretHex); r.Code != 0 {
		t.Fatalf("seal: %s", r.Stderr)
	}
	export := filepath.Join(dir, "export.json")
	if r := clitest.Run(t, nil, nil, "export", "--sign-key", filepath.Join(dir, "keys", "private.pem"), "--output", export,
		"--db", db, "--secret-hex", testSecretHex); r.Code != 0 {
		t.Fatalf("export: %s", r.Stderr)
	}
	r = clitest.Run(t, nil, nil, "verify-export", "--json", "--public-key", filepath.Join(dir, "keys", "public.pem"),
		"--secret-hex", testSecretHex, export)
	doc := cmdtest.OneJSONDocument(t, "verify-export --json", r.Stdout)
	cmdtest.SnakeKeys(t, "verify-export --json", doc)
	if r.Code != 0 || doc["valid"] != true || doc["entries"] != 3.0 {
		t.Fatalf("verify-export --json: exit %d %v\n%s", r.Code, doc, r.Stderr)
	}
	// Bound to no key: still one document, and exit 3.
	r = clitest.Run(t, nil, nil, "verify-export", "--json", export)
	doc = cmdtest.OneJSONDocument(t, "verify-export --json without a key", r.Stdout)
	if r.Code != cmdutil.ExitMismatch || doc["valid"] != false || doc["error"] == nil {
		t.Fatalf("verify-export --json without a key: exit %d %v\n%s", r.Code, doc, r.Stderr)
	}
}
