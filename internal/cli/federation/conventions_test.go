package federation

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/clitest"
)

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
	doc := cmdtest.OneJSONDocument(t, "submit --json with nothing to submit", r.Stdout)
	cmdtest.SnakeKeys(t, "submit --json", doc)
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

// TestWithdrawAsksOnATerminal: on a terminal withdraw sends nothing until the operator ID
// is typed; another answer leaves the operator registered.
func TestWithdrawAsksOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no terminal to run cairn on")
	}
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	f.routes["POST /federation/withdraw"] = func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operator_id": id, "status": "withdrawn", "withdrawn_at": "2026-01-01T00:00:00Z", "tlog_log_index": 7})
	}
	line := strings.Join([]string{clitest.Binary(t), "federation", "withdraw", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv}, " ")
	run := func(answer string) string {
		cmd := exec.Command(script, "-qec", line, "/dev/null")
		cmd.Stdin = strings.NewReader(answer + "\n")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	out := run("y")
	if !strings.Contains(out, "Type "+id+" to confirm") || !strings.Contains(out, "not confirmed") || f.requests("POST /federation/withdraw") != 0 {
		t.Fatalf("withdraw answered y: %d withdrawals sent\n%s", f.requests("POST /federation/withdraw"), out)
	}
	out = run(id)
	if !strings.Contains(out, "withdrew "+id) || f.requests("POST /federation/withdraw") != 1 {
		t.Fatalf("withdraw answered with the operator ID: %d withdrawals sent\n%s", f.requests("POST /federation/withdraw"), out)
	}
}
