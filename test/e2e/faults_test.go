package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file holds what the federation's fault tests share: a manager process with a short
// log retry schedule, a Federation with operators and submissions made through the API
// server, and waits on the anchors. The faults themselves are in fault_*_test.go, and each
// test ends with checkInvariants (invariants_test.go).

// The environment variables of internal/cli/manager/failpoint.go a fault test sets.
const (
	failpointPauseEnv = "CAIRN_FAILPOINT_PAUSE"
	retryScheduleEnv  = "CAIRN_RETRY_SCHEDULE"
)

// faultManager is a running `cairn manager` of a fault test.
type faultManager struct {
	cmd *exec.Cmd
	api string // the federation API's host:port
	out *lockedBuffer
}

// runFaultManager runs `cairn manager` serving the API of ns/fed, with the log retried
// every second and env added to its environment; leaderElect adds --leader-elect. It is
// interrupted when the test ends, and its log printed if the test failed.
func runFaultManager(ctx context.Context, t *testing.T, kubeconfig, logDir, ns string, leaderElect bool, env ...string) *faultManager {
	t.Helper()
	addrs := freeAddresses(t, 2)
	args := []string{"manager", "--kubeconfig", kubeconfig, "--log-dir", logDir, "--metrics-bind-address", "0",
		"--health-probe-bind-address", addrs[0], "--federation-bind-address", addrs[1], "--federation", ns + "/fed",
		// Only this test's namespace: an earlier test's Federation, left on the shared API
		// server, is not this manager's to anchor (into another log directory).
		"--namespaces", ns}
	if leaderElect {
		// A Lease of this test's own: an earlier test's replicas, killed when its context
		// ended, leave theirs held until it expires, and a stale holder is no leader.
		args = append(args, "--leader-elect", "--leader-election-namespace", ns)
	}
	m := &faultManager{cmd: exec.CommandContext(ctx, cairnBin, args...), api: addrs[1], out: &lockedBuffer{}}
	m.cmd.Env = append(append(os.Environ(), retryScheduleEnv+"=1s"), env...)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.cmd.Process.Signal(os.Interrupt)
		_ = m.cmd.Wait()
		if t.Failed() {
			t.Logf("manager on %s printed:\n%s", m.api, m.out.String())
		}
	})
	return m
}

// faultFederation creates namespace ns and its Federation "fed" on log, anchoring as soon
// as threshold submissions wait (and otherwise only once a day).
func faultFederation(ctx context.Context, t *testing.T, c client.Client, ns string, log fv1.TransparencyLog, threshold int32) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fed"},
		Spec: fv1.FederationSpec{AnchorInterval: metav1.Duration{Duration: 24 * time.Hour}, PendingThreshold: &threshold,
			TransparencyLog: log}}); err != nil {
		t.Fatal(err)
	}
}

// operatorKey is the key of operator i of ns, the same in every call.
func operatorKey(ns string, i int) ed25519.PrivateKey {
	seed := sha256.Sum256(fmt.Appendf(nil, "%s operator %d", ns, i))
	return ed25519.NewKeyFromSeed(seed[:])
}

// addOperators registers operators from..from+n-1 of ns through the API server, as
// `kubectl apply` would, and returns their keys.
func addOperators(ctx context.Context, t *testing.T, c client.Client, ns string, from, n int) []ed25519.PrivateKey {
	t.Helper()
	var keys []ed25519.PrivateKey
	for i := from; i < from+n; i++ {
		key := operatorKey(ns, i)
		pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		org := fmt.Sprintf("Org %d", i)
		if err := c.Create(ctx, &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("op-%d", i)},
			Spec: fv1.FederationOperatorSpec{OrgName: org, PublicKeyPEM: fv1.PublicKeyPEM(pemText),
				ProofOfPossession: fv1.Signature(protocol.SignRegistration(key, org))}}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	return keys
}

// addSubmissions creates a first submission of each operator of keys, numbered from, and
// returns their names.
func addSubmissions(ctx context.Context, t *testing.T, c client.Client, ns string, from int, keys []ed25519.PrivateKey) []string {
	t.Helper()
	var subs []string
	for i, key := range keys {
		pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		sub := signedSubmission(t, key, ns, fmt.Sprintf("sub-%d", from+i), fv1.PublicKeyPEM(pemText))
		if err := c.Create(ctx, sub); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub.Name)
	}
	return subs
}

// waitRegistered waits until n operators of ns are Active with their registration in the
// log, so that a fault of the log hits the anchors only.
func waitRegistered(ctx context.Context, t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	waitUntil(ctx, t, fmt.Sprintf("%d operators registered and logged", n), func() bool {
		var ops fv1.FederationOperatorList
		if err := c.List(ctx, &ops, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		logged := 0
		for _, fo := range ops.Items {
			if fo.Status.Phase == fv1.PhaseActive && fo.Status.RegistrationLogEntry != nil {
				logged++
			}
		}
		return logged == n
	})
}

// waitAnchors waits until ns holds want anchors, each in the log, and every accepted
// submission is marked anchored.
func waitAnchors(ctx context.Context, t *testing.T, c client.Client, ns string, want int) {
	t.Helper()
	waitUntil(ctx, t, fmt.Sprintf("%d anchors in the log with every submission anchored", want), func() bool {
		var anchors fv1.CrossAnchorList
		var subs fv1.SubmissionList
		if err := c.List(ctx, &anchors, client.InNamespace(ns)); err != nil {
			return false // the API server may be restarting
		}
		if err := c.List(ctx, &subs, client.InNamespace(ns)); err != nil {
			return false
		}
		if len(anchors.Items) > want {
			t.Fatalf("%d anchors, want %d", len(anchors.Items), want)
		}
		for _, ca := range anchors.Items {
			if ca.Status.Phase != fv1.PhaseAnchored {
				return false
			}
		}
		for _, s := range subs.Items {
			if !s.Status.Anchored || !meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionAnchored)) {
				return false
			}
		}
		return len(anchors.Items) == want
	})
}

// waitPendingTLog waits until ns's only anchor has failed its log upload at least twice,
// and returns it: the log stayed down over more than one retry.
func waitPendingTLog(ctx context.Context, t *testing.T, c client.Client, ns string) *fv1.CrossAnchor {
	t.Helper()
	var anchors fv1.CrossAnchorList
	waitUntil(ctx, t, "an anchor pending its log after two failed uploads", func() bool {
		if err := c.List(ctx, &anchors, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(anchors.Items) > 1 || len(anchors.Items) == 1 && anchors.Items[0].Status.Phase == fv1.PhaseAnchored {
			t.Fatalf("the log is down, yet %d anchors, the first %q", len(anchors.Items), anchors.Items[0].Status.Phase)
		}
		return len(anchors.Items) == 1 && anchors.Items[0].Status.Phase == fv1.PhasePendingTLog && anchors.Items[0].Status.Attempts >= 2
	})
	return &anchors.Items[0]
}

// waitUntil polls done every 200ms until it is true, failing t when ctx ends.
func waitUntil(ctx context.Context, t *testing.T, what string, done func() bool) {
	t.Helper()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitAPIReady waits until the federation API at api answers /federation/status with 200.
func waitAPIReady(ctx context.Context, t *testing.T, api string) {
	t.Helper()
	waitUntil(ctx, t, "the federation API at "+api, func() bool {
		code, _ := get(ctx, t, http.DefaultClient, "http://"+api+"/federation/status")
		return code == http.StatusOK
	})
}

// waitFile waits until path exists: a paused failpoint created it.
func waitFile(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	waitUntil(ctx, t, "the failpoint to pause ("+filepath.Base(path)+")", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// skipShort skips a fault test under -short: they take minutes together, so a quick
// `go test -short ./...` leaves them out; `make test` runs them (no -short).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a fault test: run without -short (make test does)")
	}
}
