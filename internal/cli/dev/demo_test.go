package dev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/testaddr"
)

func TestShellQuoteReadsBack(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"plain":       {[]string{"federation", "submit", "--db", "chain.db"}, "federation submit --db chain.db"},
		"paths":       {[]string{"--export", "../acme-research/exports/run-1.json"}, "--export ../acme-research/exports/run-1.json"},
		"url":         {[]string{"--log", "http://127.0.0.1:8088/federation/log"}, "--log http://127.0.0.1:8088/federation/log"},
		"space":       {[]string{"--org", "Acme Research"}, `--org "Acme Research"`},
		"dollar":      {[]string{"--org", "A$B"}, `--org 'A$B'`},
		"quote":       {[]string{"--org", `it's "x"`}, `--org 'it'\''s "x"'`},
		"empty":       {[]string{"--contact", ""}, `--contact ""`},
		"shell chars": {[]string{"a;b", "c|d"}, `"a;b" "c|d"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := shellQuote(tc.args); got != tc.want {
				t.Errorf("shellQuote(%q) = %s, want %s", tc.args, got, tc.want)
			}
		})
	}
}

func TestNextRunCounts(t *testing.T) {
	dir := t.TempDir()
	for want := 1; want <= 3; want++ {
		got, err := nextRun(dir)
		if err != nil || got != want {
			t.Fatalf("run %d: got %d, %v", want, got, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, demoRunsFile), []byte("three\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := nextRun(dir); err == nil || !strings.Contains(err.Error(), "not a run count") {
		t.Fatalf("a garbled counter: %v", err)
	}
}

func TestDemoSaysWhenNoDevAnswers(t *testing.T) {
	dir := t.TempDir()
	_, err := runCairn(t, "demo", "--dir", dir)
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitError || !strings.Contains(err.Error(), "no cairn dev answers in "+dir+" (dev.json is missing)") {
		t.Fatalf("cairn demo without dev.json: %v", err)
	}
	// A dev.json left behind by a cairn dev that died: its federation API does not answer.
	addr := testaddr.Free(t, 1)[0]
	state := `{"federation_url": "http://` + addr + `", "federation": "default/cairn"}`
	if err := os.WriteFile(filepath.Join(dir, devStateFile), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = runCairn(t, "demo", "--check", "--dir", dir)
	if err == nil || !strings.Contains(err.Error(), "no cairn dev answers in") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("cairn demo --check with a dead dev: %v", err)
	}
}

func TestDemoResultNamesPathsAsTyped(t *testing.T) {
	r := demoResult{dir: "/state/demo/acme-research",
		stdout: "rotated op_1 to key sha256:ab at T (logged at index 3); now signing with /state/demo/acme-research/keys-2/private.pem\n",
		stderr: "progress\nError: federation API: HTTP 409 key_already_registered: taken\n"}
	if got, want := r.lastLine(), "rotated op_1 to key sha256:ab at T (logged at index 3); now signing with keys-2/private.pem"; got != want {
		t.Errorf("lastLine = %q, want %q", got, want)
	}
	if got, want := r.errorLine(), "Error: federation API: HTTP 409 key_already_registered: taken"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
}

func TestCommandLineContinuesLongCommands(t *testing.T) {
	short := commandLine("acme-research", []string{"chain", "verify", "--db", "chain.db", "--full"})
	if short != "   acme-research$ cairn chain verify --db chain.db --full" {
		t.Errorf("short command: %q", short)
	}
	long := commandLine("auditor", []string{"federation", "audit", "--config-dir", "config", "--federation-key", "federation.pem",
		"--log", "http://127.0.0.1:8088/federation/log", "--receipt", "../acme-research/receipts/anchor-20261126-001.json",
		"--export", "../acme-research/exports/run-1.json", "--export", "../borealis-health/exports/run-1.json"})
	lines := strings.Split(long, "\n")
	if len(lines) < 2 {
		t.Fatalf("a long command was not continued:\n%s", long)
	}
	for i, l := range lines {
		if len(l) > commandWidth+2 {
			t.Errorf("line %d is %d wide: %q", i, len(l), l)
		}
		if i < len(lines)-1 && !strings.HasSuffix(l, " \\") {
			t.Errorf("line %d does not continue: %q", i, l)
		}
		if i > 0 && !strings.HasPrefix(strings.TrimSpace(l), "--") {
			t.Errorf("line %d does not start with an option: %q", i, l)
		}
	}
	if joined := strings.ReplaceAll(long, " \\\n       ", " "); !strings.HasSuffix(joined, "--export ../borealis-health/exports/run-1.json") ||
		strings.Contains(strings.TrimSpace(joined), "  ") {
		t.Errorf("the continued command does not read back as one: %q", joined)
	}
}

func TestWrapFillsLines(t *testing.T) {
	text := strings.Repeat("every span is an entry of its organization's HMAC chain ", 5)
	got := wrap("   ✓ ", text)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "   ✓ every") {
		t.Fatalf("wrap:\n%s", got)
	}
	for i, l := range lines {
		if len([]rune(l)) > commandWidth {
			t.Errorf("line %d is %d wide: %q", i, len([]rune(l)), l)
		}
		if i > 0 && !strings.HasPrefix(l, "     ") {
			t.Errorf("line %d is not indented under the first: %q", i, l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != "✓ "+strings.TrimSpace(text) {
		t.Errorf("wrap changed the words:\n%s", got)
	}
}
