package api

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// pageRefs parses the dashboard page and returns the URLs of its scripts, style sheets
// and icons.
func pageRefs(t *testing.T, body []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if (n.Data == "script" && a.Key == "src") || (n.Data == "link" && a.Key == "href") || (n.Data == "img" && a.Key == "src") {
					refs = append(refs, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return refs
}

func TestDashboardPageLoadsWithoutTheKey(t *testing.T) {
	f := newFixture(t, 3, func(o *Options) { o.APIKey = testAPIKey })
	resp, body := f.do(http.MethodGet, "/", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d %s", resp.StatusCode, body)
	}
	for name, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": pageCSP,
		"Cache-Control": cacheRevalidate, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if !bytes.Contains(body, []byte(testVersion.Version)) || !bytes.Contains(body, []byte(`id="verify-full"`)) {
		t.Errorf("the page lacks its version or its sections:\n%s", body)
	}
	// The data still needs the key.
	resp, body = f.do(http.MethodGet, "/api/chain/stats", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	// Every file the page loads is served from here, with its type, and cached for good
	// under the URL the page uses.
	refs := pageRefs(t, body0(t, f))
	if len(refs) < 4 {
		t.Fatalf("the page loads %v", refs)
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	for _, ref := range refs {
		u, err := url.Parse(ref)
		if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, "/assets/") || u.Query().Get("v") == "" {
			t.Errorf("the page loads %q, want /assets/<name>?v=<version>", ref)
			continue
		}
		resp, body := f.do(http.MethodGet, ref, "", nil)
		ext := u.Path[strings.LastIndex(u.Path, "."):]
		if resp.StatusCode != http.StatusOK || len(body) == 0 || resp.Header.Get("Content-Type") != types[ext] {
			t.Errorf("%s: %d, %q", ref, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if got := resp.Header.Get("Cache-Control"); got != cacheImmutable {
			t.Errorf("%s: Cache-Control %q", ref, got)
		}
		// Without its version, or with another, it is revalidated.
		resp, _ = f.do(http.MethodGet, u.Path+"?v=old", "", nil)
		if got := resp.Header.Get("Cache-Control"); resp.StatusCode != http.StatusOK || got != cacheRevalidate {
			t.Errorf("%s?v=old: %d, Cache-Control %q", u.Path, resp.StatusCode, got)
		}
		resp, _ = f.do(http.MethodGet, u.Path, "", nil, "If-None-Match", resp.Header.Get("ETag"))
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", u.Path, resp.StatusCode)
		}
	}
}

// body0 is the dashboard page's body.
func body0(t *testing.T, f *fixture) []byte {
	t.Helper()
	resp, body := f.do(http.MethodGet, "/", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	return body
}

func TestDashboardUnknownAssets(t *testing.T) {
	f := newFixture(t, 0, nil)
	for _, path := range []string{"/assets/nope.js", "/assets/index.html", "/assets/", "/assets/docs.js", "/index.html", "/nope"} {
		resp, body := f.do(http.MethodGet, path, "", nil)
		wantError(t, resp, body, http.StatusNotFound, codeNotFound)
	}
	resp, body := f.postJSON("/", "{}")
	wantError(t, resp, body, http.StatusMethodNotAllowed, codeMethodNotAllowed)
}

func TestDashboardScriptsUseNoInnerHTML(t *testing.T) {
	f := newFixture(t, 0, nil)
	for name, a := range f.srv.dashboard.assets {
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "http://", "https://", "localStorage"} {
			// The SVG namespace is a name, not a request.
			body := bytes.ReplaceAll(a.body, []byte(`"http://www.w3.org/2000/svg"`), nil)
			if name != "cairn.svg" && bytes.Contains(body, []byte(bad)) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}
