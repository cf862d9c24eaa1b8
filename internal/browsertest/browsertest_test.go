package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
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

// failures runs a check on a recorder and returns what it would have failed with.
func failures(t *testing.T, check func(testing.TB)) string {
	rec := &recorder{TB: t}
	check(rec)
	return rec.report()
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
  fetch('https://example.com/x').then(r => 'status ' + r.status, e => 'failed'),
  fetch('http://example.invalid/y').then(r => 'status ' + r.status, e => 'failed'),
]).then(rs => done(rs.map(r => r.value).join(', ')));`))
	// /unattributed reaches out in ways the DevTools protocol does not report as a
	// request of the page, or reports as something else: a dedicated worker's fetch, a
	// beacon, a WebSocket and a cross-site frame.
	mux.Handle("/unattributed", page(`const settled = [];
const worker = new Worker(URL.createObjectURL(new Blob(
  ["fetch('https://worker.example.com/w').then(() => postMessage('answered'), () => postMessage('failed'))"],
  {type: 'text/javascript'})));
settled.push(new Promise(resolve => { worker.onmessage = e => resolve(e.data); }));
navigator.sendBeacon('https://beacon.example.com/b', 'x');
settled.push(new Promise(resolve => {
  const ws = new WebSocket('wss://socket.example.com/s');
  ws.onerror = ws.onclose = () => resolve('closed');
}));
const frame = document.createElement('iframe');
frame.src = 'https://frame.example.com/f';
settled.push(new Promise(resolve => { frame.onload = frame.onerror = () => resolve('frame'); }));
document.body.append(frame);
Promise.allSettled(settled).then(() => setTimeout(() => done('settled'), 500));`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// load starts a browser and loads the test page at path in a tab of it, until its
// script has settled.
func load(t *testing.T, srv *httptest.Server, path string) (*Browser, context.Context) {
	t.Helper()
	b := New(t, FromEnv(os.Getenv))
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.Navigate(srv.URL+path), chromedp.WaitVisible(chromedp.CSS("#done")))
	return b, ctx
}

func TestConsoleErrorsAndExceptionsAreReported(t *testing.T) {
	srv := pages(t)
	b, _ := load(t, srv, "/error")

	got := failures(t, b.NoConsoleErrors)
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
	b, ctx := load(t, srv, "/external")

	// The trap answered both requests itself, with a refused tunnel (HTTPS) or a 403
	// (HTTP, a CORS failure to the page): the page got no answer from the outside.
	if got := Get(t, b, ctx, chromedp.Text(chromedp.CSS("#done"))); got != "failed, failed" {
		t.Errorf("the page's fetches ended as %q, want the trap's refusals", got)
	}
	trapped := strings.Join(b.pageTrap.requests(), "\n")
	for _, want := range []string{"CONNECT example.com:443", "GET example.invalid/y"} {
		if !strings.Contains(trapped, want) {
			t.Errorf("the page trap did not receive %q; it received:\n%s", want, trapped)
		}
	}
	if strings.Contains(trapped, "127.0.0.1") {
		t.Errorf("loopback went through the trap:\n%s", trapped)
	}
	if own := strings.Join(b.serviceTrap.requests(), "\n"); strings.Contains(own, "example") {
		t.Errorf("the page's requests reached the service trap:\n%s", own)
	}

	got := failures(t, b.NoExternalRequests)
	for _, want := range []string{
		"page requested https://example.com/x (Fetch for " + srv.URL + "/external, initiated by script " + srv.URL + "/external:",
		"page requested http://example.invalid/y (Fetch for " + srv.URL + "/external, initiated by script " + srv.URL + "/external:",
		"page trap received CONNECT example.com:443", "page trap received GET example.invalid/y"} {
		if !strings.Contains(got, want) {
			t.Errorf("NoExternalRequests did not report %q; it said:\n%s", want, got)
		}
	}
	if strings.Contains(got, srv.URL+"/external (") {
		t.Errorf("NoExternalRequests reported the loopback page:\n%s", got)
	}
	if strings.Contains(got, unattributed) {
		t.Errorf("NoExternalRequests said a request the page made was not the page's:\n%s", got)
	}
}

func TestRequestsTheProtocolDoesNotAttributeStillFail(t *testing.T) {
	srv := pages(t)
	b, _ := load(t, srv, "/unattributed")

	got := failures(t, b.NoExternalRequests)
	t.Logf("NoExternalRequests said:\n%s", got)
	// The protocol reports the beacon and the frame as requests of the page, and not the
	// worker's fetch or the WebSocket: the trap's lines for those say so.
	for host, attributed := range map[string]bool{"beacon.example.com": true, "frame.example.com": true,
		"worker.example.com": false, "socket.example.com": false} {
		line := "page trap received CONNECT " + host + ":443"
		if !attributed {
			line += unattributed
		}
		if !strings.Contains(got, line+"\n") && !strings.HasSuffix(got, line) {
			t.Errorf("NoExternalRequests did not say %q", line)
		}
	}
}

// TestTheBrowsersOwnRequestsAreLoggedNotFailed has the browser itself, outside the
// pages' browser context, ask for a page elsewhere, as its services do: the service trap
// refuses it, the pages pass, and the request is in the test's log and the browser log.
func TestTheBrowsersOwnRequestsAreLoggedNotFailed(t *testing.T) {
	srv := pages(t)
	s := FromEnv(os.Getenv)
	s.ServiceLog = filepath.Join(t.TempDir(), "browsers.log")
	t.Run("browser", func(t *testing.T) {
		b := New(t, s)
		ctx := b.Page(t)
		b.Run(t, ctx, chromedp.Navigate(srv.URL+"/clean"), chromedp.WaitVisible(chromedp.CSS("#done")))
		// A tab in the default browser context, where the browser's services run.
		if _, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: "https://example.com/own"}); err != nil {
			t.Fatalf("opening a tab in the default context: %v", err)
		}
		deadline := time.Now().Add(RunTimeout)
		for !slices.Contains(b.serviceTrap.requests(), "CONNECT example.com:443") {
			if time.Now().After(deadline) {
				t.Fatalf("the service trap never received the default context's request; it received %v", b.serviceTrap.requests())
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.NoExternalRequests(t)
		b.NoConsoleErrors(t)
	})
	raw, err := os.ReadFile(s.ServiceLog)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(raw), "\n")
	fields := strings.Split(line, "\t")
	if len(fields) != 3 || fields[0] != t.Name()+"/browser" || !strings.Contains(fields[1], "Chrome/") ||
		!strings.Contains(fields[2], "CONNECT example.com:443") || strings.Contains(line, "\n") {
		t.Errorf("the browser log is %q, want one line: the test, the version and CONNECT example.com:443", raw)
	}
}

func TestCleanPagePassesAndIsMeasured(t *testing.T) {
	t.Setenv("CAIRN_TEST_ARTIFACTS", t.TempDir())
	srv := pages(t)
	b, ctx := load(t, srv, "/clean")

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
