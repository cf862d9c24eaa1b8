package api

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cairn-dev/cairn/internal/browsertest"
)

// rendered is true once a page built from /openapi.json has replaced its loading note.
const rendered = `document.querySelector(".loading") === null && document.getElementById("version").textContent !== "…"`

// renderedDOM opens path in a new tab of b, waits until its scripts have rendered it and
// returns its DOM.
func renderedDOM(t *testing.T, b *browsertest.Browser, url string) (context.Context, []byte) {
	t.Helper()
	ctx := b.Page(t)
	b.Run(t, ctx, chromedp.EmulateViewport(1280, 1400), chromedp.Navigate(url))
	browsertest.Get(t, b, ctx, chromedp.Poll[bool](rendered, chromedp.WithPollingTimeout(20*time.Second)))
	return ctx, []byte(browsertest.Get(t, b, ctx, chromedp.OuterHTML(chromedp.CSS("html"))))
}

var (
	tagPattern   = regexp.MustCompile(`(?s)<[^>]*>`)
	servedLine   = regexp.MustCompile(`msg="Served request" method=(\S+) path=(\S+) status=(\d+)`)
	pathElements = regexp.MustCompile(`<code class="path">(.*?)</code>`)
)

// visibleText is the text of an HTML document without its tags.
func visibleText(dom []byte) string {
	return strings.Join(strings.Fields(tagPattern.ReplaceAllString(string(dom), "")), " ")
}

func TestDocsPagesRenderOfflineInChromium(t *testing.T) {
	b := browsertest.New(t, browsertest.FromEnv(os.Getenv))
	f := newFixture(t, 5, func(o *Options) { o.APIKey = testAPIKey })

	// /docs, once rendered, lists every operation, each path shown as the document spells it.
	docsTab, dom := renderedDOM(t, b, f.http.URL+"/docs")
	var paths []string
	for _, m := range pathElements.FindAllSubmatch(dom, -1) {
		paths = append(paths, tagPattern.ReplaceAllString(string(m[1]), ""))
	}
	for _, rt := range f.srv.routes {
		if !slices.Contains(paths, rt.path) {
			t.Errorf("/docs does not list %s %s; it lists %v", rt.method, rt.path, paths)
		}
	}
	if text := visibleText(dom); !strings.Contains(text, "/api/chain/{seq}") || !strings.Contains(text, "Get one entry") {
		t.Errorf("/docs did not render the operations:\n%s", text)
	}
	if n := strings.Count(string(dom), `<details class="op `); n != len(f.srv.routes) {
		t.Errorf("/docs shows %d operations, the server has %d routes", n, len(f.srv.routes))
	}

	// /redoc, once rendered, describes operations and schemas.
	redocTab, dom := renderedDOM(t, b, f.http.URL+"/redoc")
	text := visibleText(dom)
	for _, want := range []string{"Verify a replayed output", "ReplayResult", "nondeterministic_mismatch", "Authorization: Bearer", "/api/export/verify"} {
		if !strings.Contains(text, want) {
			t.Errorf("/redoc does not show %q:\n%s", want, text)
		}
	}

	// Screenshots, once the scripts have run.
	for name, tab := range map[string]context.Context{"docs": docsTab, "redoc": redocTab} {
		checkScreenshot(t, b.Screenshot(t, tab, name))
	}

	// Nothing went anywhere but our server, and no script failed...
	b.NoExternalRequests(t)
	b.NoConsoleErrors(t)
	// ...and the server served every resource the pages load, successfully.
	served := map[string]string{}
	for _, m := range servedLine.FindAllStringSubmatch(f.logs.String(), -1) {
		served[m[2]] = m[3]
	}
	for _, path := range []string{"/docs", "/redoc", "/openapi.json", "/docs/assets/cairn.css", "/docs/assets/openapi.js",
		"/docs/assets/docs.js", "/docs/assets/redoc.js", "/docs/assets/cairn.svg"} {
		if status := served[path]; status != "200" && status != "304" {
			t.Errorf("the server log shows %s as %q; it served %v", path, status, served)
		}
	}
	for path, status := range served {
		if status != "200" && status != "304" {
			t.Errorf("the pages asked for %s, answered %s", path, status)
		}
	}
}

// checkScreenshot requires a PNG of at least the window's size (a full-page shot) with
// more than a blank page in it.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 1280 || b.Dy() < 1000 {
		t.Errorf("%s is %dx%d", path, b.Dx(), b.Dy())
	}
	colours := map[uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 3 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>11<<10|g>>11<<5|b>>11] = true
		}
	}
	if len(raw) < 20_000 || len(colours) < 40 {
		t.Errorf("%s looks empty: %d bytes, %d colours", path, len(raw), len(colours))
	}
}
