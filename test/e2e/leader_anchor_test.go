package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/manager"
)

// TestAnchorRequestToTheNonLeaderAnchorsOnce runs two `cairn manager --leader-elect`
// processes on one API server: both serve the federation API, only the leader runs the
// controllers. POST /federation/anchor sent to the replica that is not the leader makes
// exactly one CrossAnchor, made and logged by the leader, and answers with it; a second
// request, with nothing left pending, is the seed's no-op.
func TestAnchorRequestToTheNonLeaderAnchorsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, kubeconfig := startAPIServer(t)
	ns := "leader"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// Two operators with a submission each, made before any manager runs; then the
	// threshold is taken off, so that only a request anchors them.
	federationWithSubmissions(ctx, t, c, ns, 2)
	var fed fv1.Federation
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fed"}, &fed); err != nil {
		t.Fatal(err)
	}
	fed.Spec.PendingThreshold = nil
	if err := c.Update(ctx, &fed); err != nil {
		t.Fatal(err)
	}

	leaderAPI := startReplica(ctx, t, kubeconfig, ns+"/fed")
	holder := waitLeader(ctx, t, c, "default")
	followerAPI := startReplica(ctx, t, kubeconfig, ns+"/fed")
	for _, api := range []string{leaderAPI, followerAPI} {
		// 503 federation_not_ready until the leader has made the Federation's key.
		for code, body := 0, ""; code != http.StatusOK; {
			if code, body = get(ctx, t, http.DefaultClient, "http://"+api+"/federation/status"); code != http.StatusOK && code != http.StatusServiceUnavailable {
				t.Fatalf("GET %s/federation/status: %d %s", api, code, body)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("GET %s/federation/status: %d %s", api, code, body)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	token := adminTokenOf(ctx, t, c, ns, "fed")
	waitAccepted(ctx, t, c, ns, 2)

	status, body := postAnchor(ctx, t, followerAPI, token)
	if status != http.StatusOK || body["status"] != "anchored" {
		t.Fatalf("POST /federation/anchor to the follower: %d %v", status, body)
	}
	var anchors fv1.CrossAnchorList
	if err := c.List(ctx, &anchors, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(anchors.Items) != 1 || body["anchor_id"] != anchors.Items[0].Name || body["submissions_anchored"] != float64(2) {
		t.Fatalf("%d CrossAnchors; the answer: %v", len(anchors.Items), body)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&fed), &fed); err != nil {
		t.Fatal(err)
	}
	if err := federation.TrustAnchor(&fed, &anchors.Items[0]); err != nil {
		t.Fatalf("the anchor: %v", err)
	}
	if h := waitLeader(ctx, t, c, "default"); h != holder {
		t.Fatalf("the leader changed from %s to %s: the follower was not a follower", holder, h)
	}

	// Nothing pending: a second request runs, and makes no anchor.
	status, body = postAnchor(ctx, t, followerAPI, token)
	if status != http.StatusOK || body["status"] != "no-op" || body["reason"] != "not enough participants" {
		t.Fatalf("a second POST /federation/anchor: %d %v", status, body)
	}
	if err := c.List(ctx, &anchors, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(anchors.Items) != 1 {
		t.Fatalf("%d CrossAnchors after the second request, want 1", len(anchors.Items))
	}
}

// startReplica runs `cairn manager --leader-elect` serving the federation API for fed,
// and returns the API's address. It is interrupted when the test ends.
func startReplica(ctx context.Context, t *testing.T, kubeconfig, fed string) string {
	t.Helper()
	addrs := freeAddresses(t, 2)
	cmd := exec.CommandContext(ctx, cairnBin, "manager", "--kubeconfig", kubeconfig, "--log-dir", t.TempDir(),
		"--leader-elect", "--leader-election-namespace", "default", "--metrics-bind-address", "0",
		"--health-probe-bind-address", addrs[0], "--federation-bind-address", addrs[1], "--federation", fed)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("manager on %s printed:\n%s", addrs[1], out.String())
		}
	})
	return addrs[1]
}

// waitLeader waits until the managers' Lease has a holder and returns it.
func waitLeader(ctx context.Context, t *testing.T, c client.Client, namespace string) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: namespace, Name: manager.LeaderElectionID}
	for c.Get(ctx, key, lease) != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		select {
		case <-ctx.Done():
			t.Fatal("no manager took the leader Lease")
		case <-time.After(100 * time.Millisecond):
		}
	}
	return *lease.Spec.HolderIdentity
}

// adminTokenOf waits for the admin Secret the leader generates and returns its token.
func adminTokenOf(ctx context.Context, t *testing.T, c client.Client, ns, fed string) string {
	t.Helper()
	var s corev1.Secret
	for c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fed + "-admin"}, &s) != nil {
		select {
		case <-ctx.Done():
			t.Fatal("the leader never made the admin Secret")
		case <-time.After(100 * time.Millisecond):
		}
	}
	return string(s.Data[federation.AdminTokenSecretKey])
}

// waitAccepted waits until n submissions of ns are accepted.
func waitAccepted(ctx context.Context, t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	for {
		var list fv1.SubmissionList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		accepted := 0
		for _, s := range list.Items {
			if s.Status.Ed25519Verified && s.Status.ContinuityVerified {
				accepted++
			}
		}
		if accepted == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d submissions accepted", accepted, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// postAnchor sends POST /federation/anchor with the admin token to the API at addr.
func postAnchor(ctx context.Context, t *testing.T, addr, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/federation/anchor", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("POST /federation/anchor: %d %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, body
}
