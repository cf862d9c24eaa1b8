package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHostHeaderIsChecked is the DNS-rebinding leg of issue 14's hole 1: a page at
// evil.example that rebinds its name to 127.0.0.1 sends Host: evil.example, and must not
// reach the chain, even on a server without an API key.
func TestHostHeaderIsChecked(t *testing.T) {
	f := newFixture(t, 3, func(o *Options) { o.AllowedHosts = []string{"127.0.0.1", "localhost", "chain.internal."} })
	tests := map[string]struct {
		host, path string
		status     int
	}{
		"rebinding page":                 {host: "evil.example:" + port(f), path: "/api/chain/verify", status: http.StatusMisdirectedRequest},
		"rebinding page, OTLP":           {host: "evil.example", path: "/v1/traces", status: http.StatusMisdirectedRequest},
		"rebinding page, the dashboard":  {host: "evil.example", path: "/", status: http.StatusMisdirectedRequest},
		"rebinding page, its script":     {host: "evil.example", path: "/assets/dashboard.js", status: http.StatusMisdirectedRequest},
		"the dashboard on loopback":      {host: "127.0.0.1:" + port(f), path: "/", status: http.StatusOK},
		"rebinding page, health is open": {host: "evil.example", path: "/health", status: http.StatusOK},
		"loopback address":               {host: "127.0.0.1:" + port(f), path: "/api/chain/verify", status: http.StatusOK},
		"localhost in capitals":          {host: "LOCALHOST:" + port(f), path: "/api/chain/verify", status: http.StatusOK},
		"an allowed name, its final dot": {host: "chain.internal", path: "/api/chain/verify", status: http.StatusOK},
		"a subdomain of an allowed name": {host: "x.chain.internal", path: "/api/chain/verify", status: http.StatusMisdirectedRequest},
		"another loopback address":       {host: "127.0.0.2", path: "/api/chain/verify", status: http.StatusMisdirectedRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			method := http.MethodPost
			if tc.path == "/health" || tc.path == "/" || strings.HasPrefix(tc.path, "/assets/") {
				method = http.MethodGet
			}
			req, err := http.NewRequestWithContext(t.Context(), method, f.http.URL+tc.path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Host = tc.host
			resp, err := f.http.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body := readAll(t, resp)
			if tc.status == http.StatusMisdirectedRequest {
				wantError(t, &answer{StatusCode: resp.StatusCode, Header: resp.Header}, body, tc.status, codeHostNotAllowed)
				return
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.:8080": "example.com",
		"[::1]:8080":        "::1",
		"0:0::1":            "::1",
		"127.0.0.1":         "127.0.0.1",
		"":                  "",
	} {
		if got := NormalizeHost(in); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func port(f *fixture) string { return f.http.URL[strings.LastIndex(f.http.URL, ":")+1:] }

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
