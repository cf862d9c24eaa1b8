package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clitest"
)

// oneJSONDocument decodes out as exactly one JSON object and fails otherwise.
func oneJSONDocument(t *testing.T, what, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s printed no JSON document: %v\n%s", what, err, out)
	}
	if dec.More() {
		t.Fatalf("%s printed more than one JSON document:\n%s", what, out)
	}
	return doc
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// snakeKeys fails for every object member of v, at any depth, not in snake_case.
func snakeKeys(t *testing.T, what string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if !snakeCase.MatchString(k) {
				t.Errorf("%s: member %q is not snake_case", what, k)
			}
			snakeKeys(t, what, m)
		}
	case []any:
		for _, m := range v {
			snakeKeys(t, what, m)
		}
	}
}

// TestUnknownSubcommandIsAUsageError: a mistyped subcommand of any group is an error that
// suggests the nearest one and exits 2, not the group's help and 0.
func TestUnknownSubcommandIsAUsageError(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"federation", "sumbit"}, "submit"},
		{[]string{"chain", "bogus"}, ""},
		{[]string{"chain", "verfy"}, "verify"},
		{[]string{"bogus"}, ""},
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
	doc := oneJSONDocument(t, "chain stats --json", r.Stdout)
	snakeKeys(t, "chain stats --json", doc)
	if doc["first_seq"] != 1.0 || doc["last_seq"] != 3.0 || doc["entries"] != 3.0 {
		t.Errorf("chain stats --json: %v", doc)
	}
}

// TestKeygenAndVerifyExportJSON: keygen --json and verify-export --json print one
// snake_case document each.
func TestKeygenAndVerifyExportJSON(t *testing.T) {
	dir := t.TempDir()
	r := clitest.Run(t, nil, nil, "keygen", "--json", "--output-dir", filepath.Join(dir, "keys"))
	key := oneJSONDocument(t, "keygen --json", r.Stdout)
	snakeKeys(t, "keygen --json", key)
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
	doc := oneJSONDocument(t, "verify-export --json", r.Stdout)
	snakeKeys(t, "verify-export --json", doc)
	if r.Code != 0 || doc["valid"] != true || doc["entries"] != 3.0 {
		t.Fatalf("verify-export --json: exit %d %v\n%s", r.Code, doc, r.Stderr)
	}
	// Bound to no key: still one document, and exit 3.
	r = clitest.Run(t, nil, nil, "verify-export", "--json", export)
	doc = oneJSONDocument(t, "verify-export --json without a key", r.Stdout)
	if r.Code != cmdutil.ExitMismatch || doc["valid"] != false || doc["error"] == nil {
		t.Fatalf("verify-export --json without a key: exit %d %v\n%s", r.Code, doc, r.Stderr)
	}
}

// TestSubmitJSONWhenNothingToSubmit: with nothing new, submit --json still prints one
// document, which says so.
func TestSubmitJSONWhenNothingToSubmit(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["GET /federation/operator/"+id] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "submissions": []map[string]any{{"last_seq": 3}}})
	}
	db := filepath.Join(dir, "chain.db")
	if r := clitest.Run(t, nil, nil, "chain", "seal", "--file", cmdtest.SpansFile(t, dir, 3), "--db", db, "--secret-hex", testSecretHex); r.Code != 0 {
		t.Fatalf("seal: %s", r.Stderr)
	}
	r := clitest.Run(t, nil, nil, "federation", "submit", "--json", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv, "--db", db, "--secret-hex", testSecretHex)
	doc := oneJSONDocument(t, "submit --json with nothing to submit", r.Stdout)
	snakeKeys(t, "submit --json", doc)
	if r.Code != 0 || doc["submitted"] != false || doc["last_accepted_seq"] != 3.0 || doc["operator_id"] != id {
		t.Fatalf("submit --json with nothing to submit: exit %d %v\n%s", r.Code, doc, r.Stderr)
	}
}

// TestWithdrawWantsConfirmation: withdraw, which cannot be undone, refuses without a
// terminal to ask on unless --yes is given, and sends no withdrawal then; stdin is not read.
func TestWithdrawWantsConfirmation(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["POST /federation/withdraw"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "status": "withdrawn", "withdrawn_at": "2026-01-01T00:00:00Z", "tlog_log_index": 7})
	}
	common := []string{"federation", "withdraw", "--service", f.URL, "--config-dir", t.TempDir(), "--operator-id", id, "--private-key", priv}
	r := clitest.Run(t, []byte("y\n"+id+"\n"), nil, common...)
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "--yes") || f.requests("POST /federation/withdraw") != 0 {
		t.Fatalf("withdraw without a terminal or --yes: exit %d, %d withdrawals sent\n%s%s", r.Code,
			f.requests("POST /federation/withdraw"), r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, nil, nil, append(common, "--yes")...)
	if r.Code != cmdutil.ExitOK || !strings.Contains(r.Stdout, "withdrew "+id) || f.requests("POST /federation/withdraw") != 1 {
		t.Fatalf("withdraw --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestUnreachableFederation: a federation nobody listens for is reported as such, naming
// its URL, without the silent retries a refused connection is not worth.
func TestUnreachableFederation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close()
	r := clitest.Run(t, nil, nil, "federation", "status", "--service", url, "--config-dir", t.TempDir())
	want := "cannot reach the federation at " + url + ": connection refused"
	if r.Code != cmdutil.ExitError || !strings.Contains(r.Stderr, want) {
		t.Fatalf("status of %s: exit %d, want 1 and %q\n%s", url, r.Code, want, r.Stderr)
	}
	// 3.5 s of retries before; a refused connection is not retried now.
	if r.Took.Seconds() > 3 {
		t.Errorf("status of a closed port took %s", r.Took)
	}
}

// TestUploadProgressOnATerminal: on a terminal (script(1) gives the binary one), the
// upload bar shows human units and is drawn a few times a second, not once per read.
func TestUploadProgressOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no terminal to run cairn on")
	}
	f := newFakeFederation(t)
	f.routes["POST /federation/submit"] = func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, map[string]any{"submission_id": "sub-1", "first_seq": 1, "last_seq": 2, "entry_count": 2})
	}
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	export := filepath.Join(dir, "export.json")
	if err := os.WriteFile(export, bytes.Repeat([]byte("x"), 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	line := strings.Join([]string{clitest.Binary(t), "federation", "submit", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv, "--export", export}, " ")
	start := time.Now()
	out, err := exec.Command(script, "-qec", line, "/dev/null").CombinedOutput()
	took := time.Since(start)
	if err != nil || !strings.Contains(string(out), "accepted sub-1") {
		t.Fatalf("submit on a terminal: %v\n%s", err, out)
	}
	draws := strings.Count(string(out), "\rupload")
	if maxDraws := int(took/cmdutil.RedrawInterval) + 2; draws > maxDraws {
		t.Errorf("the upload bar was drawn %d times in %s, want at most %d", draws, took, maxDraws)
	}
	if !strings.Contains(string(out), "8.0 MiB / 8.0 MiB") || !strings.Contains(string(out), "/s") {
		t.Errorf("the upload bar shows no human units or rate:\n%q", out)
	}
}
