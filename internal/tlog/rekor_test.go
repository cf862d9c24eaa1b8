package tlog

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The tests in this file run against a real Rekor v1 server started by hack/rekor-up.sh,
// whose URL and rekor-cli they read from REKOR_URL and REKOR_CLI (make test sets them).
// Without REKOR_URL they are skipped, unless CAIRN_REQUIRE_REKOR=1 makes that a failure.

func rekorURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("REKOR_URL")
	if u == "" {
		if os.Getenv("CAIRN_REQUIRE_REKOR") == "1" {
			t.Fatal("REKOR_URL is not set: run hack/rekor-up.sh")
		}
		t.Skip("REKOR_URL is not set: run hack/rekor-up.sh (make test does)")
	}
	return u
}

func newRekor(t *testing.T, o RekorOptions) *Rekor {
	t.Helper()
	if o.URL == "" {
		o.URL = rekorURL(t)
	}
	r, err := NewRekor(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// freshRecord is a record no earlier run has logged: the local Rekor keeps its entries.
func freshRecord(t *testing.T) []byte {
	t.Helper()
	body, _ := record(t, int(time.Now().UnixNano()%(1<<40)))
	return body
}

func TestRekorUploadFetchVerify(t *testing.T) {
	r := newRekor(t, RekorOptions{})
	testUploadFetchVerify(t, r)

	// rekor-cli, built by the same script, accepts an entry the client logged.
	e, err := r.Upload(t.Context(), freshRecord(t))
	if err != nil {
		t.Fatal(err)
	}
	cli := os.Getenv("REKOR_CLI")
	if cli == "" {
		t.Fatal("REKOR_CLI is not set")
	}
	out, err := exec.CommandContext(t.Context(), cli, "verify", "--rekor_server", r.URL(), "--uuid", e.UUID, "--store_tree_state=false").CombinedOutput()
	if err != nil {
		t.Fatalf("rekor-cli verify --uuid %s: %v\n%s", e.UUID, err, out)
	}
	t.Logf("rekor-cli verify: %s", out)
}

// Uploading a record again (Rekor answers 409) returns the same entry, from a new client
// too, as after a crash.
func TestRekorReuploadKeepsIndex(t *testing.T) {
	body := freshRecord(t)
	first, err := newRekor(t, RekorOptions{}).Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	again, err := newRekor(t, RekorOptions{}).Upload(t.Context(), body)
	if err != nil {
		t.Fatal(err)
	}
	if again.Index != first.Index || again.UUID != first.UUID {
		t.Errorf("re-upload: index %d, uuid %s; first upload: index %d, uuid %s", again.Index, again.UUID, first.Index, first.UUID)
	}
}

func TestRekorRefusesBadRecord(t *testing.T) {
	body, _ := record(t, 1)
	var forged map[string]any
	if err := json.Unmarshal(body, &forged); err != nil {
		t.Fatal(err)
	}
	forged["spec"].(map[string]any)["data"].(map[string]any)["hash"].(map[string]any)["value"] = fmt.Sprintf("%0128x", 1)
	bad, _ := json.Marshal(forged)
	_, err := newRekor(t, RekorOptions{}).Upload(t.Context(), bad)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Status != http.StatusBadRequest {
		t.Fatalf("a signature over another hash: %v, want a 400 *RefusedError", err)
	}
}

// A pinned key that is not the log's fails every bundle.
func TestRekorPinnedKeyMismatch(t *testing.T) {
	pemText, err := marshalKeyPEM(ed25519.NewKeyFromSeed(make([]byte, 32)).Public())
	if err != nil {
		t.Fatal(err)
	}
	_, err = newRekor(t, RekorOptions{PublicKeyPEM: pemText}).Upload(t.Context(), freshRecord(t))
	if !errors.Is(err, protocol.ErrMismatch) && !errors.Is(err, protocol.ErrNotIncluded) {
		t.Fatalf("upload with another key pinned: %v", err)
	}
}

// 429 and 503 are retried, with Retry-After honoured; the entry is logged once.
func TestRekorRetriesBusyLog(t *testing.T) {
	target, _ := url.Parse(rekorURL(t))
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"code":429,"message":"slow down"}`, http.StatusTooManyRequests)
		case 2:
			http.Error(w, `{"code":503,"message":"maintenance"}`, http.StatusServiceUnavailable)
		default:
			proxy.ServeHTTP(w, req)
		}
	}))
	defer srv.Close()
	r := newRekor(t, RekorOptions{URL: srv.URL, Backoff: 10 * time.Millisecond})
	if _, err := r.Upload(t.Context(), freshRecord(t)); err != nil {
		t.Fatalf("upload through two refusals: %v", err)
	}
}

// Nothing listening: the typed unavailable error, after the configured attempts.
func TestRekorClosedPortIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	r, err := NewRekor(RekorOptions{URL: "http://" + addr, Attempts: 3, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := record(t, 1)
	var unavailable *UnavailableError
	if _, err := r.Upload(t.Context(), body); !errors.As(err, &unavailable) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("upload to a closed port: %v, want *UnavailableError", err)
	}
	if err := r.Reachable(t.Context()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("reachable: %v", err)
	}
}

// The real server stopped: unavailable, nothing logged; started again: the same upload
// succeeds, once. (The local Rekor's in-memory signer makes a new key at each start, so
// the upload after the restart uses a new client: the old one, rightly, would refuse
// checkpoints signed by a key other than the one it fetched.)
func TestRekorStoppedThenRestarted(t *testing.T) {
	r := newRekor(t, RekorOptions{Attempts: 2, Backoff: 100 * time.Millisecond})
	sizeBefore := treeSize(t, r)
	rekorScript(t, "stop-rekor")
	t.Cleanup(func() { rekorScript(t, "start-rekor") })
	body := freshRecord(t)
	if _, err := r.Upload(t.Context(), body); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("upload while the log is stopped: %v, want ErrUnavailable", err)
	}
	rekorScript(t, "start-rekor")
	if got := treeSize(t, r); got != sizeBefore {
		t.Errorf("the log grew from %d to %d while it was stopped", sizeBefore, got)
	}
	e, err := newRekor(t, RekorOptions{}).Upload(t.Context(), body)
	if err != nil {
		t.Fatalf("upload after restart: %v", err)
	}
	if e.Index != sizeBefore {
		t.Errorf("logged at index %d, want %d", e.Index, sizeBefore)
	}
}

func treeSize(t *testing.T, r *Rekor) int64 {
	t.Helper()
	resp, err := r.do(t.Context(), "log info", http.MethodGet, "/api/v1/log", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer drain(resp)
	var info struct {
		TreeSize int64 `json:"treeSize"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.TreeSize
}

// rekorScript runs hack/rekor-up.sh with a subcommand.
func rekorScript(t *testing.T, sub string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "hack", "rekor-up.sh")
	out, err := exec.Command("bash", script, sub).CombinedOutput() // also from Cleanup, after t.Context ends
	if err != nil {
		t.Fatalf("hack/rekor-up.sh %s: %v\n%s", sub, err, out)
	}
}
