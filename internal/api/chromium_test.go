package api

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromium finds the browser: $CAIRN_CHROMIUM, else chromium on PATH (hack/setup-chromium.sh
// installs it). Without one the test is skipped, unless CAIRN_REQUIRE_CHROMIUM=1.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CAIRN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CAIRN_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium found and CAIRN_REQUIRE_CHROMIUM=1: run hack/setup-chromium.sh")
	}
	t.Skip("no chromium found: run hack/setup-chromium.sh (set CAIRN_REQUIRE_CHROMIUM=1 to make this a failure)")
	return ""
}

// trap stands in for every host but loopback: chromium sends all other traffic to it as
// its proxy, and it records what arrives and refuses it.
type trap struct {
	mu   sync.Mutex
	seen []string
}

func (tr *trap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	tr.seen = append(tr.seen, r.Method+" "+r.Host+r.URL.Path)
	tr.mu.Unlock()
	http.Error(w, "the browser test allows no network but loopback", http.StatusForbidden)
}

func (tr *trap) requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen)
}

// browse runs headless chromium on url with the network restricted to loopback: every
// host name but 127.0.0.1 fails to resolve, and any request for another host goes to the
// trap proxy. It gives the page's scripts a virtual-time budget to run, then does what
// the extra flags say (--dump-dom, --screenshot=...). It returns standard output.
func browse(t *testing.T, bin, proxy, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
		"--disable-breakpad", "--metrics-recording-only", "--disable-client-side-phishing-detection",
		"--disable-features=NetworkTimeServiceQuerying,AutofillServerCommunication,Translate,OptimizationHints,MediaRouter",
		// The browser's own services (component updates, Google accounts) are pointed at a
		// closed loopback port: they are not the page's, and would otherwise reach the trap.
		"--component-updater=url-source=http://127.0.0.1:9/", "--gaia-url=http://127.0.0.1:9/",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--proxy-server=" + proxy,
		"--window-size=1280,1400", "--virtual-time-budget=8000",
	}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return stdout.Bytes()
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
	bin := chromium(t)
	f := newFixture(t, 5, func(o *Options) { o.APIKey = testAPIKey })
	tr := &trap{}
	proxy := httptest.NewServer(tr)
	defer proxy.Close()
	out := t.TempDir()
	if dir := os.Getenv("CAIRN_SCREENSHOT_DIR"); dir != "" {
		out = dir // to look at them
	}

	// /docs, once rendered, lists every operation, each path shown as the document spells it.
	dom := browse(t, bin, proxy.URL, f.http.URL+"/docs", "--dump-dom")
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
	dom = browse(t, bin, proxy.URL, f.http.URL+"/redoc", "--dump-dom")
	text := visibleText(dom)
	for _, want := range []string{"Verify a replayed output", "ReplayResult", "nondeterministic_mismatch", "Authorization: Bearer", "/api/export/verify"} {
		if !strings.Contains(text, want) {
			t.Errorf("/redoc does not show %q:\n%s", want, text)
		}
	}

	// Screenshots, once the scripts have run.
	for name, page := range map[string]string{"docs.png": "/docs", "redoc.png": "/redoc"} {
		shot := filepath.Join(out, name)
		browse(t, bin, proxy.URL, f.http.URL+page, "--screenshot="+shot)
		checkScreenshot(t, shot)
	}

	// Nothing went anywhere but our server...
	if got := tr.requests(); len(got) > 0 {
		t.Errorf("the pages reached for other hosts: %v", got)
	}
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

// checkScreenshot requires a PNG of the window's size with more than a blank page in it.
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
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() < 1000 {
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
