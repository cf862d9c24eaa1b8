package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// TestAPIServerRestartedDuringSubmitsAndAnAnchorRun stops the kube-apiserver (etcd keeps
// running) while operators submit through the federation API, and again in the middle of
// an anchor run (the manager paused by a failpoint right after it created the
// CrossAnchor, resumed while the API server is down), then starts it again on the same
// address and certificates. Submits refused during the outage succeed when re-sent, a
// re-sent export is the same submission, and the anchor run finishes with every
// invariant holding.
func TestAPIServerRestartedDuringSubmitsAndAnAnchorRun(t *testing.T) {
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, kubeconfig, apiServer := startRestartableAPIServer(t)
	ns, logDir := "restart", t.TempDir()
	faultFederation(ctx, t, c, ns, fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, 4)
	pauseFile := filepath.Join(t.TempDir(), "paused")
	m := runFaultManager(ctx, t, kubeconfig, logDir, ns, false, failpointEnv+"="+failAfterAnchorCreated, failpointPauseEnv+"="+pauseFile)
	waitAPIReady(ctx, t, m.api)
	api := &apiClient{t: t, base: "http://" + m.api, hc: &http.Client{Timeout: 30 * time.Second}}
	orgs := make([]*organization, 4)
	for i := range orgs {
		orgs[i] = newOrganization(t, "Org "+string(rune('A'+i)), 3+i)
		orgs[i].register(api)
	}
	waitRegistered(ctx, t, c, ns, 4)
	began := time.Now()
	orgs[0].submit(api)
	orgs[1].submit(api)

	// The API server goes away in the middle of the submits.
	stop(t, apiServer)
	if code, _ := trySubmit(api, orgs[2]); code == http.StatusOK {
		t.Fatal("a submit was accepted while the API server was down")
	}
	start(t, apiServer)
	first := submitUntilAccepted(ctx, api, orgs[2])
	submitUntilAccepted(ctx, api, orgs[3])
	if again := submitUntilAccepted(ctx, api, orgs[2]); again != first {
		t.Fatalf("the re-sent export is submission %s, the first %s", again, first)
	}

	// Four pending: the anchor run starts, and pauses once its CrossAnchor exists. The API
	// server goes away, the run resumes against nothing, the API server comes back.
	t.Logf("%s: submits done across a restart", time.Since(began).Round(time.Second))
	waitFile(ctx, t, pauseFile)
	stop(t, apiServer)
	if err := os.Remove(pauseFile); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the outage: the resumed run's writes fail meanwhile
	start(t, apiServer)
	t.Logf("%s: the API server is back after the anchor run's outage", time.Since(began).Round(time.Second))

	waitAnchors(ctx, t, c, ns, 1)
	t.Logf("%s: the anchor run finished", time.Since(began).Round(time.Second))
	checkInvariants(ctx, t, c, ns, logDir, m.api)
}

// startRestartableAPIServer is startAPIServer with an API server that can be stopped and
// started again on the same port, serving certificate and client CA (its certificate
// directory is the test's, not a random one envtest deletes on stop), so that clients
// and kubeconfigs made before a restart keep working after it.
func startRestartableAPIServer(t *testing.T) (client.Client, string, *envtest.APIServer) {
	t.Helper()
	// kube-apiserver's graceful shutdown outlasts envtest's 20s stop timeout with the
	// manager's watches open; after 2s it is killed, as a crash would.
	apiServer := &envtest.APIServer{CertDir: t.TempDir(), StopTimeout: 2 * time.Second}
	c, kubeconfig := startAPIServerWith(t, apiServer)
	return c, kubeconfig, apiServer
}

// stop stops the API server (SIGTERM, then SIGKILL after its StopTimeout) and waits until
// nothing listens on its port.
func stop(t *testing.T, s *envtest.APIServer) {
	t.Helper()
	if err := s.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		t.Fatalf("stop the API server: %v", err)
	}
	addr := net.JoinHostPort(s.Address, s.Port)
	waitUntil(t.Context(), t, "the API server's port to close", func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err != nil
	})
}

func start(t *testing.T, s *envtest.APIServer) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatalf("start the API server again: %v", err)
	}
}

// trySubmit sends o's export once and returns the status and the submission's ID.
func trySubmit(api *apiClient, o *organization) (int, string) {
	req, err := http.NewRequest(http.MethodPost, api.base+"/federation/submit", bytes.NewReader(o.export))
	if err != nil {
		o.t.Fatal(err)
	}
	req.Header.Set("Authorization", o.token(o.export))
	req.Header.Set("Content-Type", "application/json")
	resp, err := api.hc.Do(req)
	if err != nil {
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var sub struct {
		SubmissionID string `json:"submission_id"`
	}
	_ = json.Unmarshal(raw, &sub)
	return resp.StatusCode, sub.SubmissionID
}

// submitUntilAccepted re-sends o's export, as a client retries, until it is accepted,
// and returns the submission's ID.
func submitUntilAccepted(ctx context.Context, api *apiClient, o *organization) string {
	var id string
	waitUntil(ctx, o.t, "the submit of "+o.org+" accepted", func() bool {
		var code int
		code, id = trySubmit(api, o)
		return code == http.StatusOK && id != ""
	})
	return id
}
