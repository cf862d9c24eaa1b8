package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// TestFederationClientEndToEnd is an operator's whole life with the `cairn federation`
// commands of the real binary against the real API on a real API server: three
// organizations register (pinning the federation's keys in their own config directory),
// `submit --db` twice each (the second continuing the first), an admin anchors,
// `receipts` writes verified files, `verify` exits 0 with the pinned keys and no flag,
// `audit` of the anchor with the participants' exports exits 0 (its log check read
// online) and 3 with one export swapped, `withdraw` then `submit` fails with the
// server's 403, and `rotate-key` then `submit` works with the new key.
func TestFederationClientEndToEnd(t *testing.T) {
	c, kubeconfig := startAPIServer(t)
	eachLog(t, "client", func(t *testing.T, ns string, log fv1.TransparencyLog) {
		runClientStory(t, c, kubeconfig, ns, log)
	})
}

// runClientStory runs the story in namespace ns with a manager of its own.
func runClientStory(t *testing.T, c client.Client, kubeconfig, ns string, log fv1.TransparencyLog) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	api, _, stopManager := startFederation(ctx, t, c, kubeconfig, ns, log)

	orgs := make([]*operatorMachine, 3)
	for i := range orgs {
		orgs[i] = newOperatorMachine(t, fmt.Sprintf("Org %d of %s", i, ns))
		orgs[i].mustRun("federation", "register", "--service", api.base, "--org", orgs[i].org,
			"--public-key", orgs[i].path("keys/public.pem"), "--private-key", orgs[i].path("keys/private.pem"))
		orgs[i].seal(5)
		out := orgs[i].mustRun("federation", "submit", "--db", orgs[i].db, "--save-export", orgs[i].path("first.json"))
		wantOutput(t, out, "accepted sub-", "seq 1..5")
		orgs[i].seal(4)
		out = orgs[i].mustRun("federation", "submit", "--db", orgs[i].db, "--save-export", orgs[i].path("second.json"))
		wantOutput(t, out, "seq 6..9", "continuity verified true")
		out = orgs[i].mustRun("federation", "submit", "--db", orgs[i].db)
		wantOutput(t, out, "nothing to submit")
	}

	adminToken := secretValue(ctx, t, c, ns, "fed-admin", federation.AdminTokenSecretKey)
	var anchored struct {
		AnchorID            string `json:"anchor_id"`
		SubmissionsAnchored int    `json:"submissions_anchored"`
	}
	api.do(http.MethodPost, "/federation/anchor", nil, "Bearer "+adminToken, http.StatusOK, &anchored)
	if anchored.SubmissionsAnchored != 6 {
		t.Fatalf("POST /federation/anchor: %+v, want the 6 submissions anchored", anchored)
	}

	receipt := orgs[0].loggedReceiptFile(ctx, anchored.AnchorID)
	for _, o := range orgs[1:] {
		o.loggedReceiptFile(ctx, anchored.AnchorID)
	}
	out := orgs[0].mustRun("federation", "verify", receipt)
	wantOutput(t, out, "MATCH", "pinned for 127.0.0.1:")

	exports := func(first int) []string {
		args := []string{"federation", "audit", "--receipt", receipt}
		for i, o := range orgs {
			name := "second.json"
			if i == first {
				name = "first.json"
			}
			args = append(args, "--export", o.path(name))
		}
		return args
	}
	out = orgs[0].mustRun(exports(-1)...)
	wantOutput(t, out, "AUDIT PASSED")
	if !regexp.MustCompile(`(?m)^  ok  +tlog_entry +log \w+ holds the anchor at index \d+, proved against its checkpoint`).MatchString(out) {
		t.Fatalf("audit did not read the log entry online:\n%s", out)
	}
	// Org 1's earlier segment given for the anchored one: explained, not "chain_signature mismatch".
	if code, out := orgs[0].run(exports(1)...); code != 3 || !regexp.MustCompile(`(?m)^export \S+/first.json\n(  .*\n)*  FAIL  bound_by_receipt +export \(seq \d+\.\.\d+\) is not the head the receipt binds`).MatchString(out) {
		t.Fatalf("audit with Org 1's first export for its second: exit %d, want 3\n%s", code, out)
	}

	orgs[2].mustRun("federation", "withdraw", "--yes")
	orgs[2].seal(2)
	if code, out := orgs[2].run("federation", "submit", "--db", orgs[2].db); code != 1 || !strings.Contains(out, "HTTP 403 operator_withdrawn") {
		t.Fatalf("submit after withdraw: exit %d, want 1 with the server's 403\n%s", code, out)
	}

	orgs[1].mustRun("keygen", "--output-dir", orgs[1].path("new-keys"))
	orgs[1].mustRun("federation", "rotate-key", "--new-private-key", orgs[1].path("new-keys/private.pem"))
	orgs[1].seal(3)
	out = orgs[1].mustRun("federation", "submit", "--db", orgs[1].db)
	wantOutput(t, out, "seq 10..12")

	// A log named with --log must answer; one found through the receipt that does not
	// answer (the embedded log goes with its federation) leaves the audit offline.
	if code, out := orgs[0].run(append(exports(-1), "--log", "http://127.0.0.1:1/federation/log")...); code == 0 || !strings.Contains(out, "FAIL  tlog_entry") {
		t.Fatalf("audit with a --log that does not answer: exit %d, want a failure\n%s", code, out)
	}
	if log.Type == fv1.TransparencyLogEmbedded {
		stopManager()
		api.waitDown(ctx)
		out = orgs[0].mustRun(exports(-1)...)
		wantOutput(t, out, "skip  tlog_entry", "audited offline", "AUDIT PASSED")
	}
}

// operatorMachine is one organization's machine: its keys, its chain and its own client
// configuration directory (XDG_CONFIG_HOME).
type operatorMachine struct {
	t      *testing.T
	dir    string
	org    string
	db     string
	sealed int
}

func newOperatorMachine(t *testing.T, org string) *operatorMachine {
	t.Helper()
	m := &operatorMachine{t: t, dir: t.TempDir(), org: org}
	m.db = m.path("chain.db")
	m.mustRun("keygen", "--output-dir", m.path("keys"))
	return m
}

func (m *operatorMachine) path(name string) string { return filepath.Join(m.dir, name) }

// run runs the binary on m and returns its exit code and output.
func (m *operatorMachine) run(args ...string) (int, string) {
	m.t.Helper()
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+m.path("config"), "CAIRN_HMAC_SECRET="+strings.Repeat("5a", 32),
		"CAIRN_FEDERATION_URL=", "CAIRN_DB_PATH=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return exitCode(err), string(out)
	}
	return 0, string(out)
}

// mustRun runs the binary on m and requires exit 0.
func (m *operatorMachine) mustRun(args ...string) string {
	m.t.Helper()
	code, out := m.run(args...)
	if code != 0 {
		m.t.Fatalf("%s: cairn %s: exit %d\n%s", m.org, strings.Join(args, " "), code, out)
	}
	return out
}

// seal seals n more spans into m's chain.
func (m *operatorMachine) seal(n int) {
	m.t.Helper()
	file := writeFile(m.t, m.dir, fmt.Sprintf("spans-%d.jsonl", m.sealed), spanLines(m.sealed, n))
	m.mustRun("chain", "seal", "--db", m.db, "--file", file)
	m.sealed += n
}

// loggedReceiptFile runs `cairn federation receipts` (with the flags extra) until it
// writes the receipt of anchorID with its log proof, and returns the file.
func (m *operatorMachine) loggedReceiptFile(ctx context.Context, anchorID string, extra ...string) string {
	m.t.Helper()
	path := filepath.Join(m.path("receipts"), anchorID+".json")
	for {
		out := m.mustRun(append([]string{"federation", "receipts", "--output-dir", m.path("receipts")}, extra...)...)
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), `"tlog_entry"`) {
			return path
		}
		select {
		case <-ctx.Done():
			m.t.Fatalf("%s: no logged receipt of %s; receipts printed:\n%s", m.org, anchorID, out)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wantOutput requires every one of wants in out.
func wantOutput(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}
