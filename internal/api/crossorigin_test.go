package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestCrossOriginRequestsAreRefused: every state-changing route answers 403
// cross_origin_refused to a request a browser marks as sent for another origin, with or
// without an API key configured, and serves the same request from its own origin, from
// the user's own action (Sec-Fetch-Site: none) and from clients that are no browser (no
// Origin, no Sec-Fetch-Site). Reads are never refused: a page may link to them.
func TestCrossOriginRequestsAreRefused(t *testing.T) {
	f := newFixture(t, 10, nil)
	self := f.http.URL
	for name, tc := range map[string]struct {
		headers []string
		refused bool
	}{
		"cross-site":                    {[]string{"Sec-Fetch-Site", "cross-site"}, true},
		"same-site, another port":       {[]string{"Sec-Fetch-Site", "same-site", "Origin", "http://127.0.0.1:1"}, true},
		"same-site, the same Origin":    {[]string{"Sec-Fetch-Site", "same-site", "Origin", self}, true},
		"an unknown Sec-Fetch-Site":     {[]string{"Sec-Fetch-Site", "nearby"}, true},
		"another Origin, no Sec-Fetch":  {[]string{"Origin", "http://127.0.0.1:1"}, true},
		"another host, no Sec-Fetch":    {[]string{"Origin", "http://evil.example"}, true},
		"Origin null":                   {[]string{"Origin", "null"}, true},
		"same-origin":                   {[]string{"Sec-Fetch-Site", "same-origin", "Origin", self}, false},
		"none (typed into the bar)":     {[]string{"Sec-Fetch-Site", "none"}, false},
		"the same Origin, no Sec-Fetch": {[]string{"Origin", self}, false},
		"no browser":                    {nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/api/regression/run", "/api/chain/verify", "/api/export", "/api/policy/evaluate",
				"/api/replay/verify", "/replay/verify", "/api/energy/estimate", "/api/consensus/evaluate", "/api/export/verify", "/v1/traces", "/api/nowhere"} {
				resp, body := f.do(http.MethodPost, path, "application/json", strings.NewReader(`{}`), tc.headers...)
				switch {
				case tc.refused:
					wantError(t, resp, body, http.StatusForbidden, codeCrossOrigin)
				case resp.StatusCode == http.StatusForbidden:
					t.Errorf("POST %s: refused: %s", path, body)
				}
			}
			resp, body := f.do(http.MethodGet, "/api/chain/stats", "", nil, tc.headers...)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /api/chain/stats: %d %s", resp.StatusCode, body)
			}
		})
	}
	if runs := savedRuns(t, f); len(runs) != 4 { // the four that were not refused
		t.Errorf("%d runs saved, want 4", len(runs))
	}
}

// TestCrossOriginRefusedBeforeTheKey: with an API key, a cross-site request is refused
// before the key is asked for, so that the answer says why.
func TestCrossOriginRefusedBeforeTheKey(t *testing.T) {
	f := newFixture(t, 1, func(o *Options) { o.APIKey = testAPIKey })
	resp, body := f.postJSON("/api/regression/run", `{}`, "Sec-Fetch-Site", "cross-site", "Authorization", "Bearer "+testAPIKey)
	wantError(t, resp, body, http.StatusForbidden, codeCrossOrigin)
}

// TestUntypedBodiesAreNotJSON: a body without a Content-Type (a typeless Blob, which a
// page of any origin may send without a preflight) is 415 on every JSON route, and
// nothing is saved; an empty body without a type is still the route's defaults.
func TestUntypedBodiesAreNotJSON(t *testing.T) {
	f := newFixture(t, 10, nil)
	for _, path := range []string{"/api/regression/run", "/api/chain/verify", "/api/export", "/api/policy/evaluate",
		"/api/replay/verify", "/api/energy/estimate"} { // consensus, without a provider, answers 503 first
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
			resp, body := f.do(http.MethodPost, path, ct, strings.NewReader(`{"window":100,"z_threshold":1e6}`))
			wantError(t, resp, body, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
		}
	}
	if runs := savedRuns(t, f); len(runs) != 0 {
		t.Fatalf("an untyped body saved runs: %v", runs)
	}
	resp, body := f.do(http.MethodPost, "/api/regression/run", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("an empty body without a type: %d %s", resp.StatusCode, body)
	}
	if runs := savedRuns(t, f); len(runs) != 1 || runs[0] != 3 {
		t.Fatalf("runs %v, want one with the default threshold", runs)
	}
}
