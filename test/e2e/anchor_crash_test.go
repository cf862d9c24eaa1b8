package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The failpoints of internal/cli/manager/failpoint.go: CAIRN_FAILPOINT names the step of an anchor
// at which `cairn manager` exits with status 86.
const (
	failpointEnv           = "CAIRN_FAILPOINT"
	failAfterAnchorCreated = "anchor-created"
	failAfterHalfMarked    = "half-marked"
	failAfterLogUpload     = "log-uploaded"
	failpointExitCode      = 86
)

// TestManagerKilledDuringAnAnchorRun kills the real manager process at each step of an
// anchor run (a failpoint makes it exit there, as a crash would), starts a new one, and
// expects the run finished: every submission anchored exactly once, one CrossAnchor, in
// the log once, with a receipt that verifies offline, and every invariant of
// checkInvariants holding.
func TestManagerKilledDuringAnAnchorRun(t *testing.T) {
	c, kubeconfig := startAPIServer(t)
	for _, step := range []string{failAfterAnchorCreated, failAfterHalfMarked, failAfterLogUpload} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			logDir := t.TempDir()
			ns := crashNamespace(ctx, t, c, step)

			crashed := startManager(ctx, t, kubeconfig, logDir, step)
			subs := federationWithSubmissions(ctx, t, c, ns, 4)
			if err := crashed.Wait(); exitCode(err) != failpointExitCode {
				t.Fatalf("the manager with failpoint %s ended with %v, want exit status %d", step, err, failpointExitCode)
			}

			restarted := runFaultManager(ctx, t, kubeconfig, logDir, ns, false)
			ca := waitAnchored(ctx, t, c, ns, subs)
			verifyAnchor(t, c, ns, ca)
			// The log holds the genesis record, 4 registrations and the anchor: nothing twice.
			if size := logSize(t, filepath.Join(logDir, ns, "fed")); size != 6 {
				t.Errorf("the log holds %d entries, want 6", size)
			}
			waitAPIReady(ctx, t, restarted.api)
			checkInvariants(ctx, t, c, ns, logDir, restarted.api)
		})
	}
}

func crashNamespace(ctx context.Context, t *testing.T, c client.Client, step string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crash-" + step}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// startManager runs `cairn manager` against kubeconfig, exiting at failpoint if set.
func startManager(ctx context.Context, t *testing.T, kubeconfig, logDir, failpoint string) *exec.Cmd {
	t.Helper()
	addrs := freeAddresses(t, 2)
	cmd := exec.CommandContext(ctx, cairnBin, "manager", "--kubeconfig", kubeconfig, "--log-dir", logDir,
		"--metrics-bind-address", "0", "--health-probe-bind-address", addrs[0], "--federation-bind-address", addrs[1])
	cmd.Env = append(os.Environ(), failpointEnv+"="+failpoint)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager (failpoint %q) printed:\n%s", failpoint, out.String())
		}
	})
	return cmd
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return -1
}

// federationWithSubmissions creates a Federation that anchors as soon as n submissions
// wait, n operators and a first submission of each, and returns the submissions' names.
func federationWithSubmissions(ctx context.Context, t *testing.T, c client.Client, ns string, n int) []string {
	t.Helper()
	threshold := int32(n)
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed"},
		Spec: fv1.FederationSpec{PendingThreshold: &threshold, TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}}}
	if err := c.Create(ctx, fed); err != nil {
		t.Fatal(err)
	}
	return addSubmissions(ctx, t, c, ns, 0, addOperators(ctx, t, c, ns, 0, n))
}

// signedSubmission is the Submission of a first export of 5 entries, signed by key,
// named as the federation names it; name seeds its hashes.
func signedSubmission(t *testing.T, key ed25519.PrivateKey, ns, name string, pemText fv1.PublicKeyPEM) *fv1.Submission {
	t.Helper()
	hash := func(s string) string { sum := sha256.Sum256([]byte(name + s)); return hex.EncodeToString(sum[:]) }
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion, ExportedAt: "2026-11-21T12:00:00Z",
		EntryCount: 5, FirstSeq: 1, LastSeq: 5, FirstPrevHash: protocol.GenesisPrevHash, LastHMACHash: hash("last"),
		ChainSignature: hash("chain"), EntriesRoot: hash("root")}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	id := fv1.OperatorID(protocol.OperatorID(key.Public().(ed25519.PublicKey)))
	return &fv1.Submission{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: federation.SubmissionName(id, h.FirstSeq)}, Spec: fv1.SubmissionSpec{
		OperatorID: id, ChainSignature: fv1.Hash(h.ChainSignature),
		EntryCount: h.EntryCount, FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, FirstPrevHash: fv1.Hash(h.FirstPrevHash),
		LastHMACHash: fv1.Hash(h.LastHMACHash), ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
		Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))), PublicKeyPEM: pemText}}
}

// waitAnchored waits until every submission is anchored by the one CrossAnchor and that
// anchor is in the log, and returns it.
func waitAnchored(ctx context.Context, t *testing.T, c client.Client, ns string, subs []string) *fv1.CrossAnchor {
	t.Helper()
	for {
		var anchors fv1.CrossAnchorList
		var list fv1.SubmissionList
		if err := c.List(ctx, &anchors, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(anchors.Items) > 1 {
			t.Fatalf("%d CrossAnchors, want 1", len(anchors.Items))
		}
		marked := 0
		for _, s := range list.Items {
			if s.Status.Anchored && len(anchors.Items) == 1 && s.Status.AnchorRef == anchors.Items[0].Spec.AnchorID &&
				meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionAnchored)) {
				marked++
			}
		}
		if marked == len(subs) && anchors.Items[0].Status.Phase == fv1.PhaseAnchored {
			return &anchors.Items[0]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("after the restart: %d of %d submissions anchored, %d anchors", marked, len(subs), len(anchors.Items))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// verifyAnchor checks ca's receipt offline: the federation's signature and the embedded
// log's proof bundle, both against keys read from the Federation's Secrets.
func verifyAnchor(t *testing.T, c client.Client, ns string, ca *fv1.CrossAnchor) {
	t.Helper()
	var signing, logKey corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fed-signing-key"}, &signing); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fed-log-key"}, &logKey); err != nil {
		t.Fatal(err)
	}
	key, err := protocol.ParsePrivateKeyPEM(signing.Data[federation.SigningKeySecretKey])
	if err != nil {
		t.Fatal(err)
	}
	var fed fv1.Federation
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fed"}, &fed); err != nil {
		t.Fatal(err)
	}
	logPEM, err := tlog.LogKeyPEM(string(logKey.Data[federation.LogKeySecretKey]))
	if err != nil {
		t.Fatal(err)
	}
	logPub, err := protocol.ParseLogPublicKeyPEM(logPEM)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := federation.Receipt(&fed, ca, key, logPub, nil)
	if err != nil {
		t.Fatal(err)
	}
	report, err := protocol.VerifyReceipt(raw, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if err := protocol.VerifyReceiptLog(report.Receipt, protocol.LogVerifyOptions{Key: logPub}); err != nil {
		t.Fatalf("the receipt's log proof: %v", err)
	}

	// The client CLI checks the same offline, and refuses a receipt whose log proof was
	// edited, with --log-key or without: the receipt signs the log's key (issue 14,
	// hole 4).
	dir := t.TempDir()
	fedPEM, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"receipt.json": raw, "federation.pem": fedPEM, "log.pem": logPEM,
		"edited.json": editRoot(t, raw)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for receipt, want := range map[string]int{"receipt.json": 0, "edited.json": 3} {
		for _, logFlag := range [][]string{{"--log-key", filepath.Join(dir, "log.pem")}, nil} {
			args := append([]string{"federation", "verify", filepath.Join(dir, receipt),
				"--federation-key", filepath.Join(dir, "federation.pem")}, logFlag...)
			out, err := exec.Command(cairnBin, args...).CombinedOutput()
			if got := exitCode(err); err == nil && want != 0 || err != nil && got != want {
				t.Errorf("cairn federation verify %s %v: %v, want exit %d\n%s", receipt, logFlag, err, want, out)
			}
		}
	}
}

// editRoot returns the receipt with its log proof's root hash changed.
func editRoot(t *testing.T, raw []byte) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	proof := r["tlog_entry"].(map[string]any)["verification"].(map[string]any)["inclusionProof"].(map[string]any)
	proof["rootHash"] = strings.Repeat("ab", 32)
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// logSize reads the tree size of the embedded log in dir from its checkpoint.
func logSize(t *testing.T, dir string) int {
	t.Helper()
	cp, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(bytes.TrimSpace(cp)), "\n", 3)
	var n int
	if len(lines) < 2 {
		t.Fatalf("checkpoint %q", cp)
	}
	if _, err := fmt.Sscan(lines[1], &n); err != nil {
		t.Fatal(err)
	}
	return n
}
