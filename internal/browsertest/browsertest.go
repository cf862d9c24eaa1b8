// Package browsertest is a test-only helper: it drives the system's headless Chromium
// through the DevTools protocol (chromedp) for the browser tests of Cairn's web pages,
// with every host but loopback trapped, and collects what the pages did (console errors,
// uncaught exceptions, network requests) so that a test can require none went wrong.
//
// Only tests import it: every file of the package imports "testing", and it reads the
// environment (CAIRN_CHROMIUM, CAIRN_REQUIRE_CHROMIUM, CAIRN_TEST_ARTIFACTS) as the
// tests do. Nothing downloads a browser: hack/setup-chromium.sh installs Debian's.
//
//	b := browsertest.New(t, browsertest.FromEnv(getenv)) // getenv: the os package's Getenv
//	ctx := b.Page(t)
//	b.Run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("main")))
//	b.Screenshot(t, ctx, "home")
//	b.NoConsoleErrors(t)
//	b.NoExternalRequests(t)
package browsertest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// RunTimeout bounds each call of [Browser.Run], [Get], [Browser.Screenshot] and
// [Browser.Timing].
const RunTimeout = 30 * time.Second

// Browser is one headless Chromium process with its own profile, whose traffic to any
// host but loopback goes to a trap. It records the console errors, uncaught exceptions
// and network requests of every page it opens. Its methods are safe for concurrent use;
// one page (context) must not be driven from two goroutines at once.
type Browser struct {
	ctx       context.Context // the browser's first tab; pages are its children
	trap      *trap
	artifacts string // Settings.ArtifactsRoot

	mu       sync.Mutex
	problems []string // console errors and exceptions, in arrival order
	requests []string // every request URL of every page
}

// Settings say which browser to run and where artifacts go. This package reads no
// environment: a test builds its Settings with FromEnv, passing the os package's Getenv.
type Settings struct {
	// Chromium is the browser binary; empty: chromium or chromium-browser on PATH.
	Chromium string
	// Require fails the test, rather than skipping it, when no browser is found.
	Require bool
	// ArtifactsRoot is where each test's artifacts directory is made; empty:
	// <os.TempDir()>/cairn-artifacts.
	ArtifactsRoot string
}

// FromEnv reads the Settings from the environment through getenv: CAIRN_CHROMIUM,
// CAIRN_REQUIRE_CHROMIUM=1 (make test sets it) and CAIRN_TEST_ARTIFACTS.
func FromEnv(getenv func(string) string) Settings {
	return Settings{Chromium: getenv("CAIRN_CHROMIUM"), Require: getenv("CAIRN_REQUIRE_CHROMIUM") == "1",
		ArtifactsRoot: getenv("CAIRN_TEST_ARTIFACTS")}
}

// chromium finds the browser binary: s.Chromium, else chromium or chromium-browser on
// PATH. Without one it skips the test, unless s.Require, when it fails.
func (s Settings) chromium(t testing.TB) string {
	t.Helper()
	if s.Chromium != "" {
		return s.Chromium
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if s.Require {
		t.Fatal("no chromium found and CAIRN_REQUIRE_CHROMIUM=1: run hack/setup-chromium.sh")
	}
	t.Skip("no chromium found: run hack/setup-chromium.sh (set CAIRN_REQUIRE_CHROMIUM=1 to make this a failure)")
	return ""
}

// allocatorOptions are the flags Chromium runs with: headless, a fresh profile, and no
// network but loopback. Chromium never sends loopback (127.0.0.1, localhost, [::1])
// through a proxy, so the page's own server is reached directly, while every other
// host, over HTTP, HTTPS (CONNECT) or WebSocket, goes to the trap proxy. The host
// resolver answers NOTFOUND for every name but loopback, so no DNS query (prefetch or
// otherwise) leaves the machine; QUIC and non-proxied WebRTC UDP are off; and the
// browser's own services are pointed at a closed loopback port or disabled.
func allocatorOptions(bin, profile, proxy string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		chromedp.ProxyServer(proxy),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE [::1]"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", "Translate,NetworkTimeServiceQuerying,AutofillServerCommunication,"+
			"OptimizationHints,MediaRouter,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater"),
		chromedp.Flag("component-updater", "url-source=http://127.0.0.1:9/"),
		chromedp.Flag("gaia-url", "http://127.0.0.1:9/"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run sandboxed as root
	}
	return opts
}

// New starts a headless system Chromium (see [Settings]) with a fresh profile in
// t.TempDir() and every host but loopback trapped (see [Browser.NoExternalRequests]).
// It skips the test when no Chromium is found, unless s.Require. The browser stops when
// the test ends.
func New(t testing.TB, s Settings) *Browser {
	t.Helper()
	bin := s.chromium(t)
	tr := &trap{}
	proxy := httptest.NewServer(tr)
	t.Cleanup(proxy.Close)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		allocatorOptions(bin, t.TempDir(), proxy.URL)...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() }) // before TempDir's removal: cleanups run last first
	start(t, ctx, "starting "+bin)
	return &Browser{ctx: ctx, trap: tr, artifacts: s.ArtifactsRoot}
}

// start runs the first action on a chromedp context, which starts its browser or opens
// its tab. That Run must get the context itself, without a timeout: the browser or tab
// lives only as long as the context of its first Run. So the wait is bounded here.
func start(t testing.TB, ctx context.Context, what string) {
	t.Helper()
	started := make(chan error, 1)
	go func() { _, err := chromedp.Run(ctx, noop); started <- err }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(RunTimeout):
		t.Fatalf("%s: no answer within %s", what, RunTimeout)
	}
}

// noop is an action that does nothing: running it starts the browser or opens the tab.
var noop chromedp.Action[chromedp.Void] = func(context.Context, *chromedp.Target) (chromedp.Void, error) {
	return chromedp.Void{}, nil
}

// Page opens a new tab and returns its chromedp context. From the tab's start, b
// records its console messages of level error, its uncaught exceptions and the URL of
// every request it makes. The tab closes when the test ends.
func (b *Browser) Page(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(b.listen))
	t.Cleanup(cancel)
	start(t, ctx, "opening a tab")
	return ctx
}

// Run runs the actions on the page ctx, in order, each call bounded by [RunTimeout],
// and fails the test on an error, showing the console errors seen so far.
func (b *Browser) Run(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	Get(t, b, ctx, chromedp.Steps(actions...))
}

// Get runs one action that returns a value (chromedp.Text, chromedp.Evaluate, ...) on
// the page ctx as [Browser.Run] does, and returns the value.
func Get[T any](t testing.TB, b *Browser, ctx context.Context, action chromedp.Action[T]) T {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, RunTimeout)
	defer cancel()
	v, err := chromedp.Run(rctx, action)
	if err != nil {
		t.Fatalf("browser: %v\nconsole errors so far:%s", err, bullets(b.consoleProblems()))
	}
	return v
}

// Screenshot writes a full-page PNG of the page ctx to ArtifactsDir/<name>.png and
// returns its path.
func (b *Browser) Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	img := Get(t, b, ctx, chromedp.FullScreenshot(100))
	path := filepath.Join(ArtifactsDir(t, b.artifacts), sanitize(name)+".png")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatalf("writing the screenshot: %v", err)
	}
	return path
}

// PaintTiming is what the page's Performance API says about its load, in milliseconds
// since navigation start. A zero means the browser reported no such entry.
type PaintTiming struct {
	FirstPaint            float64 `json:"firstPaint"`
	FirstContentfulPaint  float64 `json:"firstContentfulPaint"`
	DOMInteractive        float64 `json:"domInteractive"`
	DOMContentLoadedEnd   float64 `json:"domContentLoadedEventEnd"`
	LoadEventEnd          float64 `json:"loadEventEnd"`
	TransferSizeBytes     float64 `json:"transferSize"`
	ResourceCount         int     `json:"resources"`
	ResourceTransferBytes float64 `json:"resourceTransferSize"`
}

// String formats the timing for a log line or BENCHMARKS.
func (p PaintTiming) String() string {
	return fmt.Sprintf("first paint %.0f ms, first contentful paint %.0f ms, DOM interactive %.0f ms, "+
		"DOMContentLoaded end %.0f ms, load end %.0f ms, %d resources",
		p.FirstPaint, p.FirstContentfulPaint, p.DOMInteractive, p.DOMContentLoadedEnd, p.LoadEventEnd, p.ResourceCount)
}

// timingScript waits (up to 5 s) for the first contentful paint and the load event,
// then reads performance.getEntriesByType.
const timingScript = `new Promise(resolve => {
  const start = Date.now();
  const read = () => {
    const paint = {};
    for (const e of performance.getEntriesByType('paint')) paint[e.name] = e.startTime;
    const nav = performance.getEntriesByType('navigation')[0] || {};
    const res = performance.getEntriesByType('resource');
    return {
      firstPaint: paint['first-paint'] || 0,
      firstContentfulPaint: paint['first-contentful-paint'] || 0,
      domInteractive: nav.domInteractive || 0,
      domContentLoadedEventEnd: nav.domContentLoadedEventEnd || 0,
      loadEventEnd: nav.loadEventEnd || 0,
      transferSize: nav.transferSize || 0,
      resources: res.length,
      resourceTransferSize: res.reduce((n, e) => n + (e.transferSize || 0), 0),
    };
  };
  const poll = () => {
    const t = read();
    if ((t.firstContentfulPaint > 0 && t.loadEventEnd > 0) || Date.now() - start > 5000) resolve(t);
    else setTimeout(poll, 20);
  };
  poll();
})`

// Timing reads the paint and navigation timing of the page ctx (after it loaded), for
// the numbers in BENCHMARKS.
func (b *Browser) Timing(t testing.TB, ctx context.Context) PaintTiming {
	t.Helper()
	return Get(t, b, ctx, chromedp.Evaluate[PaintTiming](timingScript, chromedp.EvalAwaitPromise))
}

// bullets formats lines as an indented list, or " none".
func bullets(lines []string) string {
	if len(lines) == 0 {
		return " none"
	}
	return "\n\t" + strings.Join(lines, "\n\t")
}
