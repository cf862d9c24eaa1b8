package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/witness"
)

// witnesses is what GET /federation/log/witnesses answers.
type witnesses struct {
	LogVerifierKey string `json:"log_verifier_key"`
	Policy         string `json:"policy"`
	Quorum         string `json:"quorum"`
	Satisfied      bool   `json:"satisfied"`
	TreeSize       uint64 `json:"tree_size"`
}

// TestWitnessedFederationOnDev is issue 37's story on cairn dev: its two witnesses and a
// third a member runs with cairn witness serve, a policy of 2 of 3 applied with kubectl;
// receipts verify under the policy, also with the member's witness down; then the
// federation's log directory is put back to an old copy and grown otherwise, and every
// witness refuses it, verify finds its receipts unwitnessed and audit reports the split
// view.
func TestWitnessedFederationOnDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts cairn dev")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	work := t.TempDir()
	fixed := freeAddresses(t, 3) // kept across restarts: the policy names the witnesses, the operator its federation
	witnessAddrs := strings.Join(fixed[:2], ",")
	devFlags := []string{"--witness-addrs", witnessAddrs, "--federation-bind-address", fixed[2]}
	dev := startDev(ctx, t, work, "cairn dev: ready", devFlags...)
	kubeconfig := filepath.Join(work, ".cairn-dev", "kubeconfig")
	api := &apiClient{t: t, base: "http://" + dev.federationAddr, hc: &http.Client{Timeout: 90 * time.Second}}
	api.waitReady(ctx)
	admin := adminToken(t, kubeconfig)
	var ws witnesses
	api.do(http.MethodGet, "/federation/log/witnesses", nil, "", http.StatusOK, &ws)
	devPolicy, err := witness.ParsePolicy([]byte(ws.Policy))
	if err != nil || len(devPolicy.Witnesses) != 2 {
		t.Fatalf("cairn dev's witness policy: %v\n%s", err, ws.Policy)
	}

	// A member runs the third witness, from the README's commands.
	member := t.TempDir()
	vkey := strings.TrimSpace(cairnOut(t, "witness", "keygen", "--name", "witness.member-3.example", "--key", filepath.Join(member, "w.key")))
	w3Addr := freeAddresses(t, 1)[0]
	startW3 := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, cairnBin, "witness", "serve", "--key", filepath.Join(member, "w.key"),
			"--state", filepath.Join(member, "w.db"), "--log", ws.LogVerifierKey, "--addr", w3Addr)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitHTTP(ctx, t, "http://"+w3Addr+"/checkpoint/none")
		return cmd
	}
	w3 := startW3()

	// The federation's administrators apply 2 of 3 (GitOps: kubectl).
	patch := `{"spec":{"transparencyLog":{"witnesses":{"quorum":2,"witnesses":[`
	for i, w := range devPolicy.Witnesses {
		patch += fmt.Sprintf(`{"name":"dev-%d","key":%q,"url":%q},`, i+1, w.Key.String(), w.URL)
	}
	patch += fmt.Sprintf(`{"name":"member-3","key":%q,"url":%q}]}}}}`, vkey, "http://"+w3Addr)
	kubectl(t, kubeconfig, "patch", "federation", "cairn", "-n", "default", "--type", "merge", "-p", patch)
	waitFor(ctx, t, "a 2 of 3 policy met", "true", func() string {
		api.do(http.MethodGet, "/federation/log/witnesses", nil, "", http.StatusOK, &ws)
		return fmt.Sprint(strings.HasPrefix(ws.Quorum, "2 of (") && strings.Count(ws.Quorum, ",") == 2 && ws.Satisfied)
	})
	auditor := t.TempDir()
	policyFile := writeFile(t, auditor, "witnesses.policy", []byte(ws.Policy))

	honest := newOperatorMachine(t, "Witnessed Org")
	if err := os.MkdirAll(honest.path("exports"), 0o700); err != nil {
		t.Fatal(err)
	}
	honest.mustRun("federation", "register", "--service", api.base, "--org", honest.org,
		"--public-key", honest.path("keys/public.pem"), "--private-key", honest.path("keys/private.pem"))
	anchors := 0
	anchor := func() string {
		t.Helper()
		honest.seal(3)
		anchors++
		wantOutput(t, honest.mustRun("federation", "submit", "--db", honest.db,
			"--save-export", honest.path(fmt.Sprintf("exports/%d.json", anchors))), "continuity verified true")
		var run anchorRun
		api.do(http.MethodPost, "/federation/anchor", nil, admin, http.StatusOK, &run)
		return run.AnchorID
	}
	// witnessedReceipt fetches the receipt of id until its log proof meets the policy (its
	// proof is renewed once enough witnesses cosigned) and returns verify's output.
	witnessedReceipt := func(id string) (string, string) {
		t.Helper()
		var out string
		for {
			file := honest.loggedReceiptFile(ctx, id)
			code, o := honest.run("federation", "verify", file, "--witness-policy", policyFile)
			if code == 0 {
				return file, o
			}
			out = o
			select {
			case <-ctx.Done():
				t.Fatalf("the receipt of %s never met the policy:\n%s", id, out)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}

	first := anchor()
	_, out := witnessedReceipt(first)
	wantOutput(t, out, "witnesses", "2 of (", "MATCH")

	// The member's witness goes down: anchoring goes on, and receipts still meet 2 of 3.
	_ = w3.Process.Kill()
	_ = w3.Wait()
	second := anchor()
	_, out = witnessedReceipt(second)
	wantOutput(t, out, "cosigned by witness-1.cairn-dev.local, witness-2.cairn-dev.local", "MATCH")
	startW3()

	// Fork: a copy of the log's directory, the log grown past it (and witnessed), then the
	// copy put back and grown otherwise.
	logDir := filepath.Join(work, ".cairn-dev", "tlog", "default", "cairn")
	dev.interrupt(t)
	backup := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(backup, os.DirFS(logDir)); err != nil {
		t.Fatal(err)
	}
	dev = startDev(ctx, t, work, "cairn dev: ready", devFlags...)
	api.waitReady(ctx)
	third := anchor()
	beforeFork, _ := witnessedReceipt(third)
	beforeForkExport := honest.path(fmt.Sprintf("exports/%d.json", anchors))
	dev.interrupt(t)
	if err := os.RemoveAll(logDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(backup, logDir); err != nil {
		t.Fatal(err)
	}
	startDev(ctx, t, work, "cairn dev: ready", devFlags...) // stopped by the test's cleanup
	api.waitReady(ctx)
	var forked string
	for range 4 { // past the size the witnesses cosigned
		forked = anchor()
	}
	waitFor(ctx, t, "the Federation to report the witnesses' refusal", "SplitViewRefused", func() string {
		return kubectl(t, kubeconfig, "get", "federation", "cairn", "-n", "default",
			"-o", `jsonpath={.status.conditions[?(@.type=="Witnessed")].reason}`)
	})
	for _, w := range append(devPolicy.Witnesses, witness.Witness{URL: "http://" + w3Addr}) {
		origin := strings.SplitN(ws.LogVerifierKey, "+", 2)[0]
		resp, err := http.Get(w.URL + "/conflicts/" + origin)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if !strings.Contains(string(body), "cosigned_checkpoint") {
			t.Fatalf("witness %s kept no evidence of the fork: %s", w.URL, body)
		}
	}
	file := honest.loggedReceiptFile(ctx, forked)
	code, out := honest.run("federation", "verify", file, "--witness-policy", policyFile)
	if code != 3 || !strings.Contains(out, "not witnessed") {
		t.Fatalf("verify of a receipt of the forked log: exit %d, want 3 saying it is not witnessed:\n%s", code, out)
	}
	code, out = honest.run("federation", "audit", "--receipt", beforeFork, "--export", beforeForkExport,
		"--log", api.base+"/federation/log", "--witness-policy", policyFile)
	if code != 3 || !strings.Contains(out, "split view") {
		t.Fatalf("audit of a receipt from before the fork: exit %d, want 3 reporting the split view:\n%s", code, out)
	}
}

// adminToken is the federation's admin bearer token, from its Secret.
func adminToken(t *testing.T, kubeconfig string) string {
	t.Helper()
	token, err := base64.StdEncoding.DecodeString(kubectl(t, kubeconfig, "get", "secret", "-n", "default", "cairn-admin",
		"-o", "jsonpath={.data.token}"))
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + string(token)
}

// cairnOut runs the binary and returns its standard output, requiring exit 0.
func cairnOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(cairnBin, args...).Output()
	if err != nil {
		t.Fatalf("cairn %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// waitHTTP waits until url answers at all.
func waitHTTP(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	for {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing answered at %s", url)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
