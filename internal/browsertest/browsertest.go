// Package browsertest is a test-only helper: it drives the system's headless Chromium
// through the DevTools protocol (chromedp) for the browser tests of Cairn's web pages,
// with every host but loopback trapped, and collects what the pages did (console errors,
// uncaught exceptions, network requests) so that a test can require none went wrong.
//
// What a page asks of the network is told apart from what the browser asks on its own
// (network time, component updates, spelling dictionaries, account checks: which of
// these a build runs changes from build to build): the pages run in a browser context
// whose proxy is one trap, the browser's services in the default context whose proxy is
// another. A page reaching anything but loopback fails its test; the browser's own
// attempts are refused as well, and logged.
//
// Only tests import it: every file of the package imports "testing", and it reads the
// environment (CAIRN_CHROMIUM, CAIRN_REQUIRE_CHROMIUM, CAIRN_TEST_ARTIFACTS,
// CAIRN_BROWSER_LOG) as the tests do. Nothing downloads a browser: hack/setup-chromium.sh
// installs Debian's.
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
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// RunTimeout bounds each call of [Browser.Run], [Get], [Browser.Screenshot] and
// [Browser.Timing]. It catches a browser that hangs, and is no speed target: a
// full-page screenshot of /redoc (an 8 MB PNG) took over 30 s on two cores shared with
// a load run and the other test packages.
const RunTimeout = 2 * time.Minute

// Browser is one headless Chromium process with its own profile, whose traffic to any
// host but loopback goes to one of two traps (see [New]). It records the console errors, uncaught exceptions
// and network requests of every page it opens. Its methods are safe for concurrent use;
// one page (context) must not be driven from two goroutines at once.
type Browser struct {
	ctx         context.Context // the first tab of the pages' browser context; pages are its children
	pageTrap    *trap           // the proxy of the pages' browser context
	serviceTrap *trap           // the proxy of the default context, and the address of every service flag
	version     string          // the browser's product and version
	artifacts   string          // Settings.ArtifactsRoot

	mu       sync.Mutex
	problems []string      // console errors and exceptions, in arrival order
	requests []pageRequest // every request of every page, in order
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
	// ServiceLog, when set, is a file to which each browser appends, as it stops, one
	// line: the test, the browser's version and what its own services tried (make test
	// prints it, so a run shows which browser ran and what it was refused).
	ServiceLog string
}

// FromEnv reads the Settings from the environment through getenv: CAIRN_CHROMIUM,
// CAIRN_REQUIRE_CHROMIUM=1 (make test sets it), CAIRN_TEST_ARTIFACTS and
// CAIRN_BROWSER_LOG.
func FromEnv(getenv func(string) string) Settings {
	return Settings{Chromium: getenv("CAIRN_CHROMIUM"), Require: getenv("CAIRN_REQUIRE_CHROMIUM") == "1",
		ArtifactsRoot: getenv("CAIRN_TEST_ARTIFACTS"), ServiceLog: getenv("CAIRN_BROWSER_LOG")}
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

// New starts a headless system Chromium (see [Settings]) with a fresh profile in
// t.TempDir() and two traps for every host but loopback. The pages (see [Browser.Page])
// run in a browser context of their own whose traffic goes to the page trap; the
// browser's own services run in the default one, whose traffic goes to the service trap.
// [Browser.NoExternalRequests] fails the test for the first and logs the second. It
// skips the test when no Chromium is found, unless s.Require. The browser stops when the
// test ends, after logging what its services tried.
func New(t testing.TB, s Settings) *Browser {
	t.Helper()
	bin := s.chromium(t)
	b := &Browser{serviceTrap: &trap{}, pageTrap: &trap{}, artifacts: s.ArtifactsRoot}
	services, pages := httptest.NewServer(b.serviceTrap), httptest.NewServer(b.pageTrap)
	t.Cleanup(services.Close)
	t.Cleanup(pages.Close)

	profile := t.TempDir()
	writeProfile(t, profile)
	// Not t.TempDir(): a long test name would make the path of Chromium's socket in it
	// longer than a Unix socket's address can be.
	tmp, err := os.MkdirTemp("", "cairn-chromium-")
	if err != nil {
		t.Fatalf("browser temporary directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		allocatorOptions(bin, profile, tmp, services.URL)...)
	browserCtx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() }) // before TempDir's removal: cleanups run last first
	start(t, browserCtx, "starting "+bin)
	b.version = productVersion(browserCtx)

	// The pages' browser context, with its first tab; every page is a tab in it.
	pagesCtx, cancelPages := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext(
		func(p *target.CreateBrowserContextParams) { p.ProxyServer = pages.URL }))
	t.Cleanup(cancelPages)
	start(t, pagesCtx, "creating the pages' browser context")
	b.ctx = pagesCtx
	t.Cleanup(func() { b.logServiceRequests(t, s.ServiceLog) })
	return b
}

// productVersion is what the browser says it is ("Chrome/156.0.8078.108"), or why it
// could not say.
func productVersion(browserCtx context.Context) string {
	ctx, cancel := context.WithTimeout(browserCtx, RunTimeout)
	defer cancel()
	v, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return "unknown version: " + err.Error()
	}
	return v.Product
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

// Page opens a new tab in the pages' browser context and returns its chromedp context.
// From the tab's start, b records its console messages of level error, its uncaught
// exceptions and every request it makes, with its frame and initiator. The tab closes
// when the test ends.
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

// bullets formats lines as an indented list, or " none".
func bullets(lines []string) string {
	if len(lines) == 0 {
		return " none"
	}
	return "\n\t" + strings.Join(lines, "\n\t")
}
