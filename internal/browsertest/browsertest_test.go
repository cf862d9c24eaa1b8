package browsertest

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// recorder is a testing.TB whose Errorf and Fatalf record the message instead of
// failing, so a test can require that a check fails.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.TB.Fatalf("unexpected fatal failure: "+format, args...)
}

func (r *recorder) report() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.failed, "\n")
}

// pages serves the test pages. Each script ends by adding <p id="done">, once what it
// does has settled.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>t</title>
<style>body{font:16px sans-serif;background:#fafafa} main{padding:2em;background:#2a6;color:#fff}</style>
</head><body><main><h1>Cairn browsertest</h1><p>A page.</p></main>
<script>
function done(text) { const p = document.createElement('p'); p.id = 'done'; p.textContent = text; document.body.append(p); }
%s
</script></body></html>`, body)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/clean", page(`console.log('fine'); fetch('/data.json').then(r => r.json()).then(d => done(d.ok));`))
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"ok":"yes"}`)
	})
	mux.Handle("/error", page(`console.error('boom from the page');
const img = document.createElement('img');
img.onerror = () => { setTimeout(() => done('after'), 0); throw new Error('uncaught boom'); };
img.src = '/missing.png';
document.body.append(img);`))
	mux.Handle("/external", page(`Promise.allSettled([
  fetch('http://example.invalid/x').then(r => 'status ' + r.status, e => 'failed'),
  fetch('https://example.com/y').then(r => 'status ' + r.status, e => 'failed'),
]).then(rs => done(rs.map(r => r.value).join(', ')));`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestConsoleErrorsAndExceptionsAreReported(t *testing.T) {
	srv := pages(t)
	b := New(t, FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/error"), chromedp.WaitVisible(chromedp.CSS("#done")))

	rec := &recorder{TB: t}
	b.NoConsoleErrors(rec)
	got := rec.report()
	for _, want := range []string{"console.error: boom from the page", "exception: Uncaught Error: uncaught boom",
		"log network error: Failed to load resource: the server responded with a status of 404 (Not Found) (" + srv.URL + "/missing.png)"} {
		if !strings.Contains(got, want) {
			t.Errorf("NoConsoleErrors did not report %q; it said:\n%s", want, got)
		}
	}
	b.NoExternalRequests(t) // the page's errors are its own: nothing left loopback
}

func TestExternalRequestsAreTrappedAndReported(t *testing.T) {
	srv := pages(t)
	b := New(t, FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/external"), chromedp.WaitVisible(chromedp.CSS("#done")))

	// The trap answered both requests itself, with a 403 (HTTP, a CORS failure to the
	// page) or a refused tunnel (HTTPS): the page got no answer from the outside.
	if got := Get(t, b, ctx, chromedp.Text(chromedp.CSS("#done"))); got != "failed, failed" {
		t.Errorf("the page's fetches ended as %q, want the trap's refusals", got)
	}
	trapped := strings.Join(b.trap.requests(), "\n")
	for _, want := range []string{"GET example.invalid/x", "CONNECT example.com:443"} {
		if !strings.Contains(trapped, want) {
			t.Errorf("the trap did not receive %q; it received:\n%s", want, trapped)
		}
	}
	if strings.Contains(trapped, "127.0.0.1") {
		t.Errorf("loopback went through the trap:\n%s", trapped)
	}

	rec := &recorder{TB: t}
	b.NoExternalRequests(rec)
	got := rec.report()
	for _, want := range []string{"page requested http://example.invalid/x", "page requested https://example.com/y",
		"trap received GET example.invalid/x", "trap received CONNECT example.com:443"} {
		if !strings.Contains(got, want) {
			t.Errorf("NoExternalRequests did not report %q; it said:\n%s", want, got)
		}
	}
	if strings.Contains(got, srv.URL) {
		t.Errorf("NoExternalRequests reported the loopback server:\n%s", got)
	}
}

func TestCleanPagePassesAndIsMeasured(t *testing.T) {
	t.Setenv("CAIRN_TEST_ARTIFACTS", t.TempDir())
	srv := pages(t)
	b := New(t, FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/clean"), chromedp.WaitVisible(chromedp.CSS("#done")))

	b.NoConsoleErrors(t)
	b.NoExternalRequests(t)
	if got := strings.Join(b.Requests(), " "); !strings.Contains(got, srv.URL+"/data.json") {
		t.Errorf("the requests recorded were %s, want the page's fetch of /data.json", got)
	}

	path := b.Screenshot(t, ctx, "clean page")
	if want := filepath.Join(os.Getenv("CAIRN_TEST_ARTIFACTS"), "TestCleanPagePassesAndIsMeasured", "clean_page.png"); path != want {
		t.Errorf("screenshot at %s, want %s", path, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if bounds := img.Bounds(); bounds.Dx() != 1280 || bounds.Dy() < 100 {
		t.Errorf("the screenshot is %dx%d", bounds.Dx(), bounds.Dy())
	}

	timing := b.Timing(t, ctx)
	t.Logf("timing: %v", timing)
	for name, ms := range map[string]float64{"first paint": timing.FirstPaint, "first contentful paint": timing.FirstContentfulPaint,
		"DOM interactive": timing.DOMInteractive, "DOMContentLoaded end": timing.DOMContentLoadedEnd} {
		if ms <= 0 {
			t.Errorf("%s is %v ms, want a positive time", name, ms)
		}
	}
}

func TestLocal(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080/x": true, "http://localhost/": true, "http://[::1]:9/": true,
		"data:image/png;base64,AA": true, "blob:http://127.0.0.1/abc": true, "about:blank": true,
		"http://example.invalid/x": false, "https://cdn.example.com/a.js": false, "http://127.0.0.2/": false,
		"http://localhost.example.com/": false, "ftp://127.0.0.1/": false, "%zz": false,
	} {
		if got := local(u); got != want {
			t.Errorf("local(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"TestX/sub case": "TestX_sub_case", "a.b-c_d": "a.b-c_d", "..": "_", "": "_", "ü/..": "__.."} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
