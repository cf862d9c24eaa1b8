package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cairn-dev/cairn/internal/browsertest"
)

// attackPage is a web page on another origin (another loopback port) that drives the
// chain service at target from the user's browser, with no API key configured: each
// request is one a page may send without a CORS preflight (a "simple request"), its
// answer opaque to the page but its effect real. It records in window.sent how many of
// its requests the browser sent.
const attackPage = `<!doctype html><meta charset="utf-8"><title>a page</title><body><script>
const target = %q;
const run = JSON.stringify({window: 100, z_threshold: 1e6});
const attempts = [
  // A typeless Blob: no Content-Type header at all.
  () => fetch(target + "/api/regression/run", {method: "POST", mode: "no-cors", body: new Blob([run])}),
  // The same as text/plain, which a form can send too.
  () => fetch(target + "/api/regression/run", {method: "POST", mode: "no-cors", body: run}),
  // No body: a run with the defaults, saved all the same.
  () => fetch(target + "/api/regression/run", {method: "POST", mode: "no-cors"}),
  // An HTML form, multipart, as a click on a link to this page sends it.
  () => { const f = new FormData(); f.append("window", "100"); return fetch(target + "/api/regression/run", {method: "POST", mode: "no-cors", body: f}); },
  // Spans into the chain, as an OTLP exporter would send them but for the content type.
  () => fetch(target + "/v1/traces", {method: "POST", mode: "no-cors", body: new Blob(['{"resourceSpans":[]}'])}),
];
window.sent = 0;
(async () => {
  for (const a of attempts) { try { await a(); } catch (e) {} window.sent++; }
  window.done = true;
})();
</script></body>`

// TestCrossSiteRequestsAreRefusedInTheBrowser is issue 33's CSRF: with no API key on the
// loopback chain service, a page of another origin POSTed a typeless Blob that decodeJSON
// took for JSON, and Chromium saved a regression run with z_threshold 1e6, which hides
// every anomaly. Now the service refuses every state-changing request a browser marks as
// cross-site (Sec-Fetch-Site, Origin) and every body that is not typed JSON: no run is
// saved. The dashboard, on the service's own origin, still runs one.
func TestCrossSiteRequestsAreRefusedInTheBrowser(t *testing.T) {
	b := browsertest.New(t, browsertest.FromEnv(os.Getenv))
	f := newFixture(t, 30, nil) // no API key: the service trusts loopback
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, attackPage, f.http.URL)
	}))
	t.Cleanup(attacker.Close)
	if attacker.URL == f.http.URL {
		t.Fatal("the attacker's page must be on another origin")
	}

	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(attacker.URL+"/"))
	waitFor(t, b, ctx, `window.done === true`)
	if n := browsertest.Get(t, b, ctx, chromedp.Evaluate[int](`window.sent`)); n != 5 {
		t.Fatalf("the page sent %d requests, want 5", n)
	}
	if runs := savedRuns(t, f); len(runs) != 0 {
		t.Errorf("a page of another origin saved %d regression runs: %v", len(runs), runs)
	}
	if last, err := f.store.LastSeq(t.Context()); err != nil || last != 30 {
		t.Errorf("the chain holds %d entries after the page's spans, want 30 (%v)", last, err)
	}
	for _, line := range strings.Split(f.logs.String(), "\n") {
		if strings.Contains(line, "path=/api/regression/run") && strings.Contains(line, "status=200") {
			t.Errorf("the service answered a cross-site run: %s", line)
		}
	}

	// The dashboard, same origin, still saves a run.
	dash := b.Page(t)
	b.Run(t, dash, chromedp.Navigate(f.http.URL+"/"))
	waitFor(t, b, dash, loaded)
	browsertest.Get(t, b, dash, chromedp.Evaluate[bool](`fetch("/api/regression/run", {method: "POST",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({window: 20})}).then(r => { window.ranStatus = r.status; }), true`))
	waitFor(t, b, dash, `window.ranStatus !== undefined`)
	if got := browsertest.Get(t, b, dash, chromedp.Evaluate[int](`window.ranStatus`)); got != http.StatusOK {
		t.Errorf("the dashboard's own run: HTTP %d, want 200", got)
	}
	if runs := savedRuns(t, f); len(runs) != 1 {
		t.Errorf("after the dashboard's run %d runs are saved, want 1", len(runs))
	}
	b.NoExternalRequests(t)
}

// savedRuns lists the z thresholds of the regression runs the service saved.
func savedRuns(t *testing.T, f *fixture) []float64 {
	t.Helper()
	resp, body := f.do(http.MethodGet, "/api/regression/history?limit=100", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("history: %d %s", resp.StatusCode, body)
	}
	var h struct {
		Runs []struct {
			ZThreshold float64 `json:"z_threshold"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("history %s: %v", body, err)
	}
	zs := make([]float64, len(h.Runs))
	for i, r := range h.Runs {
		zs[i] = r.ZThreshold
	}
	return zs
}
