package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// tokenSpans writes a JSON Lines file of spans with these output tokens (as strings
// every other span, as pkg/chain writes big integers), 100 input tokens and 800 ms each.
func tokenSpans(t *testing.T, dir, name string, first int, outputs ...int) string {
	t.Helper()
	var b strings.Builder
	for i, out := range outputs {
		n := first + i
		tokens := fmt.Sprint(out)
		if n%2 == 0 {
			tokens = `"` + tokens + `"`
		}
		start := int64(1795262400000000000) + int64(n)*1e9
		fmt.Fprintf(&b, `{"name":"chat gpt-4o","kind":"client","attributes":{"gen_ai.request.model":"gpt-4o","cloud.region":"eu-west-1",`+
			`"gen_ai.usage.input_tokens":100,"gen_ai.usage.output_tokens":%s},"status_code":"OK","status_description":"",`+
			`"start_time_ns":"%d","end_time_ns":"%d","trace_id":"%032x","span_id":"%016x"}`+"\n", tokens, start, start+800_000_000, n, n)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRegressionCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	withSecret := []string{"--db", db, "--secret-hex", testSecretHex}
	ordinary := make([]int, 20)
	for i := range ordinary {
		ordinary[i] = 200 + i%5
	}
	if _, err := runCairn(t, append([]string{"chain", "seal", "--file", tokenSpans(t, dir, "a.jsonl", 1, ordinary...)}, withSecret...)...); err != nil {
		t.Fatal(err)
	}
	regression := func(args ...string) (*analysis.Run, int, error) {
		t.Helper()
		out, err := runCairn(t, append([]string{"regression"}, args...)...)
		var run analysis.Run
		if jerr := json.Unmarshal([]byte(out), &run); jerr != nil && err == nil {
			t.Fatalf("output is not a run: %v\n%s", jerr, out)
		}
		return &run, exitCode(err), err
	}

	run, code, err := regression(append(withSecret, "--window", "20")...)
	if code != ExitOK || run.ID != 1 || run.Flagged || run.EntriesConsidered != 20 || run.Window != 20 {
		t.Fatalf("ordinary chain: exit %d (%v), run %+v", code, err, run)
	}

	if _, err := runCairn(t, append([]string{"chain", "seal", "--file", tokenSpans(t, dir, "b.jsonl", 21, 9000)}, withSecret...)...); err != nil {
		t.Fatal(err)
	}
	run, code, err = regression(append(withSecret, "--z-threshold", "3.0")...)
	if code != ExitDrift || run.ID != 2 || !run.Flagged || !strings.Contains(err.Error(), "output_tokens") {
		t.Fatalf("drift: exit %d (%v), run %+v", code, err, run)
	}

	// --no-save needs no secret and writes nothing.
	run, code, _ = regression("--db", db, "--no-save")
	if code != ExitDrift || run.ID != 0 || run.StartedAt.IsZero() {
		t.Fatalf("--no-save: exit %d, run %+v", code, run)
	}
	if run, _, _ = regression(withSecret...); run.ID != 3 {
		t.Fatalf("the run after --no-save has id %d, want 3", run.ID)
	}

	for name, c := range map[string]struct {
		args []string
		want int
	}{
		"window too small":  {append(withSecret, "--window", "4"), ExitUsage},
		"negative z":        {append(withSecret, "--z-threshold", "-1"), ExitUsage},
		"no secret to save": {[]string{"--db", db}, ExitUsage},
		"not a number":      {append(withSecret, "--window", "many"), ExitUsage},
		"no chain":          {[]string{"--db", filepath.Join(dir, "none.db"), "--no-save"}, ExitError},
	} {
		t.Run(name, func(t *testing.T) {
			if _, code, err := regression(c.args...); code != c.want {
				t.Errorf("exit %d, want %d (%v)", code, c.want, err)
			}
		})
	}
}
