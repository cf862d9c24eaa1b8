package api

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// samplePath fills a route's wildcards with values that exist.
func samplePath(path string) string {
	return strings.NewReplacer("{seq}", "2", "{name}", "docs.js").Replace(path)
}

func TestAuthCoversEveryRouteButTheOpenOnes(t *testing.T) {
	open := map[string]bool{"/health": true, "/api/health": true, "/version": true, "/api/version": true,
		"/openapi.json": true, "/docs": true, "/redoc": true, "/docs/assets/{name}": true,
		"/": true, "/assets/{name}": true}
	withKey := newFixture(t, 3, func(o *Options) { o.APIKey = testAPIKey })
	without := newFixture(t, 3, nil)
	for _, rt := range withKey.srv.routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			if rt.public != open[rt.path] {
				t.Fatalf("public is %t", rt.public)
			}
			path := samplePath(rt.path)
			tests := map[string]struct {
				f            *fixture
				header       string
				unauthorized bool
			}{
				"key configured, none sent":       {f: withKey, unauthorized: !rt.public},
				"key configured, wrong key sent":  {f: withKey, header: "Bearer not-the-key", unauthorized: !rt.public},
				"key configured, key as Basic":    {f: withKey, header: "Basic " + testAPIKey, unauthorized: !rt.public},
				"key configured, key sent":        {f: withKey, header: "Bearer " + testAPIKey},
				"key configured, scheme in lower": {f: withKey, header: "bearer " + testAPIKey},
				"no key configured":               {f: without},
			}
			for name, tc := range tests {
				resp, body := tc.f.do(rt.method, path, "", nil, "Authorization", tc.header)
				if got := resp.StatusCode == http.StatusUnauthorized; got != tc.unauthorized {
					t.Errorf("%s: status %d: %s", name, resp.StatusCode, body)
					continue
				}
				if tc.unauthorized {
					wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
					if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="cairn"` {
						t.Errorf("%s: WWW-Authenticate %q", name, got)
					}
				}
			}
		})
	}
	// Unknown /api paths ask for the key first, so routes cannot be probed without it.
	resp, body := withKey.do(http.MethodGet, "/api/nothing-here", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = withKey.do(http.MethodGet, "/api/nothing-here", "", nil, "Authorization", "Bearer "+testAPIKey)
	wantError(t, resp, body, http.StatusNotFound, codeNotFound)
	// A wrong method on an open route is 405, not 401.
	resp, body = withKey.do(http.MethodPost, "/api/health", "", nil)
	wantError(t, resp, body, http.StatusMethodNotAllowed, codeMethodNotAllowed)
}

func TestUnmatchedRequestsGetJSON(t *testing.T) {
	f := newFixture(t, 3, nil)
	tests := map[string]struct {
		method, path string
		status       int
		code         string
		allow        string
	}{
		"unknown path":               {method: http.MethodGet, path: "/nope", status: http.StatusNotFound, code: codeNotFound},
		"unknown api path":           {method: http.MethodGet, path: "/api/chain/2/more", status: http.StatusNotFound, code: codeNotFound},
		"GET on a POST route":        {method: http.MethodGet, path: "/api/export", status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed, allow: "POST"},
		"DELETE on a GET route":      {method: http.MethodDelete, path: "/api/chain", status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed, allow: "GET, HEAD"},
		"PUT on the replay alias":    {method: http.MethodPut, path: "/replay/verify", status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed, allow: "POST"},
		"unknown asset":              {method: http.MethodGet, path: "/docs/assets/nope.js", status: http.StatusNotFound, code: codeNotFound},
		"a page is not an asset":     {method: http.MethodGet, path: "/docs/assets/docs.html", status: http.StatusNotFound, code: codeNotFound},
		"POST on an entry is not ok": {method: http.MethodPost, path: "/api/chain/2", status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed, allow: "GET, HEAD"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.do(tc.method, tc.path, "", nil)
			e := wantError(t, resp, body, tc.status, tc.code)
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if tc.allow != "" && !strings.Contains(e.Message, tc.allow) {
				t.Errorf("message %q does not name the allowed methods", e.Message)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
		})
	}
}

func TestHealthAndVersion(t *testing.T) {
	f := newFixture(t, 1, func(o *Options) { o.APIKey = testAPIKey })
	for _, path := range []string{"/health", "/api/health"} {
		resp, body := f.do(http.MethodGet, path, "", nil)
		var h healthResponse
		decode(t, body, &h)
		want := healthResponse{Status: "ok", Version: testVersion.Version, DB: f.dbPath, DBExists: true}
		if resp.StatusCode != http.StatusOK || h != want {
			t.Errorf("%s: %d %+v, want %+v", path, resp.StatusCode, h, want)
		}
	}
	for _, path := range []string{"/version", "/api/version"} {
		resp, body := f.do(http.MethodGet, path, "", nil)
		var v versionResponse
		decode(t, body, &v)
		want := versionResponse{Version: testVersion.Version, Package: "cairn", GoVersion: testVersion.GoVersion, Platform: testVersion.Platform}
		if resp.StatusCode != http.StatusOK || v != want {
			t.Errorf("%s: %d %+v, want %+v", path, resp.StatusCode, v, want)
		}
	}
	// The health check reports a chain file that went away, and stays up.
	if err := os.Rename(f.dbPath, f.dbPath+".moved"); err != nil {
		t.Fatal(err)
	}
	resp, body := f.do(http.MethodGet, "/health", "", nil)
	var h healthResponse
	decode(t, body, &h)
	if resp.StatusCode != http.StatusOK || h.DBExists {
		t.Errorf("health without the file: %d %+v", resp.StatusCode, h)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	f := newFixture(t, 0, nil)
	tests := map[string]Options{
		"no store":           {},
		"short secret":       {Store: f.store, Secret: []byte("short")},
		"short signing key":  {Store: f.store, SigningKey: testKey[:10]},
		"negative cap":       {Store: f.store, MaxUploadBytes: -1},
		"key with white end": {Store: f.store, APIKey: "key "},
	}
	for name, o := range tests {
		if _, err := New(o); err == nil {
			t.Errorf("%s: New did not fail", name)
		}
	}
}

func TestPagesAndAssets(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey })
	for _, path := range []string{"/docs", "/redoc"} {
		resp, body := f.do(http.MethodGet, path, "", nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		// Everything a page loads is ours: no absolute URLs at all.
		for _, bad := range []string{"http://", "https://", "//cdn"} {
			if strings.Contains(string(body), bad) {
				t.Errorf("%s refers to %s", path, bad)
			}
		}
	}
	for name, a := range f.srv.assets {
		if strings.HasSuffix(name, ".html") {
			continue
		}
		resp, body := f.do(http.MethodGet, "/docs/assets/"+name, "", nil)
		if resp.StatusCode != http.StatusOK || string(body) != string(a.body) || resp.Header.Get("ETag") == "" {
			t.Errorf("asset %s: %d, %d bytes", name, resp.StatusCode, len(body))
		}
		for _, bad := range []string{"http://", "https://"} {
			if strings.Contains(string(body), bad) && !strings.HasSuffix(name, ".svg") {
				t.Errorf("asset %s refers to %s", name, bad)
			}
		}
		resp, _ = f.do(http.MethodGet, "/docs/assets/"+name, "", nil, "If-None-Match", a.etag)
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("asset %s with its ETag: %d, want 304", name, resp.StatusCode)
		}
	}
}

func TestTracesRouteNeedsTheKey(t *testing.T) {
	var calls int
	traces := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		w.WriteHeader(http.StatusOK)
	})
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey; o.Traces = traces })
	resp, body := f.do(http.MethodPost, "/v1/traces", "application/x-protobuf", strings.NewReader("x"))
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, _ = f.do(http.MethodPost, "/v1/traces", "application/x-protobuf", strings.NewReader("x"), "Authorization", "Bearer "+testAPIKey)
	if resp.StatusCode != http.StatusOK || calls != 1 {
		t.Fatalf("with the key: %d, %d calls", resp.StatusCode, calls)
	}
	resp, body = f.do(http.MethodGet, "/v1/traces", "", nil, "Authorization", "Bearer "+testAPIKey)
	wantError(t, resp, body, http.StatusMethodNotAllowed, codeMethodNotAllowed)
	// Without Options.Traces there is no such route.
	none := newFixture(t, 0, nil)
	resp, body = none.do(http.MethodPost, "/v1/traces", "application/x-protobuf", strings.NewReader("x"))
	wantError(t, resp, body, http.StatusNotFound, codeNotFound)
}
