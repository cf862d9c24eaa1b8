package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// anchorMade finds the anchor a demo run made in its output.
var anchorMade = regexp.MustCompile(`(?m)^     (anchor-\d{8}-\d{3}) binds 3 operators' chain signatures`)

// runDemo runs `cairn demo --dir dir` and returns its exit code and output.
func runDemo(ctx context.Context, t *testing.T, dir string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, cairnBin, "demo", "--dir", dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return exitCode(err), string(out)
	}
	return 0, string(out)
}

// mustDemo runs the demo, requires exit 0 and every line of want, and returns the anchor
// it made.
func mustDemo(ctx context.Context, t *testing.T, dir string, want ...string) (string, string) {
	t.Helper()
	code, out := runDemo(ctx, t, dir)
	if code != 0 {
		t.Fatalf("cairn demo: exit %d, want 0:\n%s", code, out)
	}
	wantStory(t, out, want...)
	if n := strings.Count(out, "\n   ✓ "); n != 9 {
		t.Fatalf("cairn demo: %d steps held, want 9:\n%s", n, out)
	}
	m := anchorMade.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("cairn demo made no anchor of the three:\n%s", out)
	}
	return m[1], out
}

// TestDemoAgainstDevTwice is the demo's Done-means: `cairn dev` as a subprocess on free
// ports, the demo against it to the end, Ctrl-C, `cairn dev` again on the same state (on
// other ports), and the demo again: the story continues with a second anchor.
func TestDemoAgainstDevTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	work := t.TempDir()
	dir := filepath.Join(work, ".cairn-dev")

	if code, out := runDemo(ctx, t, dir); code != 1 || !strings.Contains(out, "no cairn dev answers in") {
		t.Fatalf("cairn demo with no cairn dev: exit %d, want 1 saying so:\n%s", code, out)
	}
	dev := startDev(ctx, t, work, "cairn dev: ready")
	first, out := mustDemo(ctx, t, dir,
		"Cairn demo, run 1:",
		"acme-research    4 gen_ai spans to http://127.0.0.1:", "sealed as seq 1..4",
		"acme-research$ cairn federation register --config-dir config --org \"Acme Research\"",
		"accepted sub-", "seq 1..5, entry_count 5, continuity verified true",
		"POST http://127.0.0.1:", "/federation/anchor with the admin token of Secret default/cairn-admin",
		"MATCH     receipt receipts/anchor-",
		"GET /federation/verify/anchor-", ": valid, 3 participants",
		"AUDIT PASSED  anchor-",
		"borealis-health$ cairn federation rotate-key", "rotated op_",
		"cobalt-labs$ cairn federation withdraw", "withdrew op_",
		"witnesses              checkpoint of size", "refused it, HTTP 409: split view",
		"Every step held (run 1, 9 steps).")
	t.Logf("run 1:\n%s", out)
	dev.interrupt(t)

	dev = startDev(ctx, t, work, "cairn dev: ready")
	second, out := mustDemo(ctx, t, dir,
		"Cairn demo, run 2:",
		"sealed as seq 5..8",
		"the federation moved from http://127.0.0.1:",
		"acme-research    already registered: op_", ", Active, signing with keys/",
		"borealis-health  already registered: op_", ", Active, signing with keys-2/",
		"cobalt-labs      withdrew as op_", "so its old key is refused:", "Error: federation API: HTTP 409 key_already_registered",
		"cobalt-labs$ cairn keygen --output-dir keys-2",
		"accepted sub-", "seq 5..8, entry_count 8, continuity verified true",
		"its earlier receipt still verifies offline",
		"borealis-health  signs with its rotated key",
		"AUDIT PASSED  anchor-",
		"Every step held (run 2, 9 steps).")
	t.Logf("run 2:\n%s", out)
	if second == first {
		t.Errorf("the second run anchored %s again, want a new anchor", first)
	}
	if !strings.Contains(oneLine(out), "Cobalt Labs rejoined as op_") {
		t.Errorf("the second run does not say that Cobalt Labs rejoined under a new ID:\n%s", out)
	}
	dev.interrupt(t)
}

// TestDemoFailsOnTamperedState tampers with what the first run left, then runs
// `cairn dev --demo`: the demo, and dev with it, exits non-zero naming the step that
// found it. First a kept receipt whose cross-anchor hash is edited (step 5, receipts),
// then a chain whose sealed call had its token count raised (step 1, seal). Last,
// `cairn dev --demo --fresh` starts the story over, tampered chain and all.
func TestDemoFailsOnTamperedState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	work := t.TempDir()
	dir := filepath.Join(work, ".cairn-dev")
	dev := startDev(ctx, t, work, "cairn dev: ready")
	anchor, _ := mustDemo(ctx, t, dir)
	dev.interrupt(t)

	receipt := filepath.Join(dir, "demo", "acme-research", "receipts", anchor+".json")
	original := readFile(t, receipt)
	i := bytes.Index(original, []byte(`"cross_anchor_hash":"`)) + len(`"cross_anchor_hash":"`)
	if i < len(`"cross_anchor_hash":"`) {
		t.Fatalf("no cross_anchor_hash in %s:\n%s", receipt, original)
	}
	forged := bytes.Clone(original)
	forged[i] = flipHex(forged[i])
	writeFile(t, filepath.Dir(receipt), filepath.Base(receipt), forged)
	out := devDemoFails(ctx, t, work, "The demo FAILED at step 5 (receipts)")
	wantStory(t, out, "Acme Research's receipt receipts/"+anchor+".json, kept since an earlier run, does not verify",
		"MISMATCH  receipt receipts/"+anchor+".json does not verify")

	writeFile(t, filepath.Dir(receipt), filepath.Base(receipt), original)
	raiseTokens(t, filepath.Join(dir, "demo", "borealis-health", "chain.db"), 2)
	out = devDemoFails(ctx, t, work, "The demo FAILED at step 1 (seal)")
	wantStory(t, out, "borealis-health$ cairn chain verify --db chain.db", "the chain of Borealis Health does not verify")

	if code, out := devDemo(ctx, t, work, "--fresh"); code != 0 {
		t.Fatalf("cairn dev --demo --fresh: exit %d, want 0:\n%s", code, out)
	} else {
		wantStory(t, out, "Cairn demo, run 1:", "sealed as seq 1..3", "witnesses              checkpoint of size", "refused it, HTTP 409: split view",
			"Every step held (run 1, 9 steps).", "cairn dev: stopped")
	}
}

// devDemo runs `cairn dev --demo` in work with flags, on free ports, and returns its exit
// code and output once it stopped, which it must have done cleanly.
func devDemo(ctx context.Context, t *testing.T, work string, flags ...string) (int, string) {
	t.Helper()
	addrs := freeAddresses(t, 6)
	cmd := exec.CommandContext(ctx, cairnBin, append([]string{"dev", "--demo", "--assets", assetsDir(t),
		"--health-probe-bind-address", addrs[0], "--metrics-bind-address", "0",
		"--federation-bind-address", addrs[2], "--serve-addr", addrs[3], "--witness-addrs", addrs[4] + "," + addrs[5]}, flags...)...)
	cmd.Dir = work
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	wantOutput(t, out, "cairn dev: stopped")
	if _, err := os.Stat(filepath.Join(work, ".cairn-dev", "dev.json")); !os.IsNotExist(err) {
		t.Errorf("dev.json of a stopped cairn dev was left behind: stat: %v", err)
	}
	if err != nil {
		return exitCode(err), out
	}
	return 0, out
}

// devDemoFails runs `cairn dev --demo` in work and requires a non-zero exit with failure
// in the output; it returns the output.
func devDemoFails(ctx context.Context, t *testing.T, work, failure string) string {
	t.Helper()
	code, out := devDemo(ctx, t, work)
	if code == 0 {
		t.Fatalf("cairn dev --demo on tampered state: exit 0, want a failure:\n%s", out)
	}
	wantStory(t, out, failure)
	return out
}

// raiseTokens edits, as someone with write access to the file could, the input token
// count of the call sealed at seq in the chain at path.
func raiseTokens(t *testing.T, path string, seq int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var body []byte
	if err := db.QueryRow("SELECT canonical_body FROM chain WHERE seq = ?", seq).Scan(&body); err != nil {
		t.Fatal(err)
	}
	key := []byte(`"gen_ai.usage.input_tokens":`)
	i := bytes.Index(body, key)
	if i < 0 {
		t.Fatalf("seq %d has no input token count: %s", seq, body)
	}
	edited := bytes.Clone(body)
	edited[i+len(key)] = '9'
	if bytes.Equal(edited, body) {
		edited[i+len(key)] = '8'
	}
	if _, err := db.Exec("UPDATE chain SET canonical_body = ? WHERE seq = ?", edited, seq); err != nil {
		t.Fatal(err)
	}
}

// wantStory requires every one of wants in the story out, whose lines may be filled
// (and commands continued) anywhere a space is.
func wantStory(t *testing.T, out string, wants ...string) {
	t.Helper()
	story := oneLine(out)
	for _, w := range wants {
		if !strings.Contains(story, oneLine(w)) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

// oneLine turns every run of white space, and a command's continuation, into one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, " \\\n", " ")), " ")
}

// flipHex turns a hex digit into another.
func flipHex(c byte) byte {
	if c == '0' {
		return '1'
	}
	return '0'
}
