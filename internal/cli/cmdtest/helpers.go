package cmdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// SecretHex is the HMAC secret of the tests' chains.
const SecretHex = "5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c"

// SpansFile writes n spans as JSON Lines, times as strings and as numbers alternately.
func SpansFile(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		start := fmt.Sprintf("%d", 1795262400000000000+int64(i)*1e9)
		if i%2 == 0 {
			start = `"` + start + `"`
		}
		fmt.Fprintf(&b, `{"name":"chat gpt-4o","kind":"client","attributes":{"gen_ai.request.model":"gpt-4o","n":%d},`+
			`"status_code":"OK","status_description":"","start_time_ns":%s,"end_time_ns":"1795262499000000000",`+
			`"trace_id":"%032x","span_id":"%016x"}`+"\n", i, start, i, i)
	}
	path := filepath.Join(dir, "spans.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// CloseTo reports whether a and b are equal up to rounding.
func CloseTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))+1e-15
}

// GetURL fetches url with an optional bearer key and returns the status and body.
func GetURL(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// PostJSON posts body to url with the bearer key and decodes the JSON answer into v.
func PostJSON(t *testing.T, url, key, body string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("POST %s: %d %s: %v", url, resp.StatusCode, data, err)
	}
	return resp.StatusCode
}

// StartServe runs `serve --addr <a free loopback port> args...` of root until ctx ends,
// and returns its base URL once /health answers and a channel that gets serve's result.
func StartServe(t *testing.T, ctx context.Context, root *cobra.Command, args ...string) (base string, done <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	result := make(chan error, 1)
	go func() {
		root.SetArgs(append([]string{"serve", "--addr", addr}, args...))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		result <- root.ExecuteContext(Context(ctx))
	}()
	waitCtx, stopWaiting := context.WithTimeout(ctx, 20*time.Second)
	defer stopWaiting()
	base = "http://" + addr
	if err := cmdutil.WaitReady(waitCtx, base+"/health", result); err != nil {
		t.Fatalf("cairn serve did not start: %v", err)
	}
	return base, result
}
