package api

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// dashboardFS holds the dashboard's page template and the scripts, styles and icon it
// loads, all written for this service: nothing is fetched from elsewhere.
//
//go:embed dashboard
var dashboardFS embed.FS

// dashboardPage is the template of the dashboard, under dashboard/.
const dashboardPage = "index.html"

// Cache-Control of the dashboard's files. An asset asked for with its version (?v=, the
// URL the page uses) never changes under that URL, so browsers keep it a year without
// asking again; any other answer is revalidated with its ETag.
const (
	cacheImmutable   = "public, max-age=31536000, immutable"
	cacheRevalidate  = "no-cache"
	dashboardTitle   = "Cairn dashboard"
	dashboardVersion = "v"
)

// dashboard is the dashboard's page, rendered once, and its assets.
type dashboard struct {
	page   asset
	assets map[string]asset
}

// dashboardData is what the page template is rendered with: nothing about the chain,
// which the page reads from /api with the key when one is set.
type dashboardData struct {
	Title   string
	Version string
	// Assets maps an asset's name to its versioned URL.
	Assets map[string]string
}

// loadDashboard reads the embedded assets and renders the page, which names each asset
// with its version so that it can be cached for good.
func loadDashboard(version string) (*dashboard, error) {
	d := &dashboard{assets: map[string]asset{}}
	entries, err := fs.ReadDir(dashboardFS, "dashboard")
	if err != nil {
		return nil, fmt.Errorf("api: read the embedded dashboard: %w", err)
	}
	urls := map[string]string{}
	for _, e := range entries {
		if e.Name() == dashboardPage {
			continue
		}
		body, err := dashboardFS.ReadFile("dashboard/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("api: read the dashboard's %s: %w", e.Name(), err)
		}
		a, err := newAsset(e.Name(), body)
		if err != nil {
			return nil, err
		}
		d.assets[e.Name()] = a
		urls[e.Name()] = "/assets/" + e.Name() + "?" + dashboardVersion + "=" + a.version()
	}
	tmpl, err := template.New(dashboardPage).Option("missingkey=error").Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			if u, ok := urls[name]; ok {
				return u, nil
			}
			return "", fmt.Errorf("no dashboard asset %q", name)
		},
	}).ParseFS(dashboardFS, "dashboard/"+dashboardPage)
	if err != nil {
		return nil, fmt.Errorf("api: parse the dashboard's page: %w", err)
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, dashboardData{Title: dashboardTitle, Version: version, Assets: urls}); err != nil {
		return nil, fmt.Errorf("api: render the dashboard's page: %w", err)
	}
	d.page, err = newAsset(dashboardPage, page.Bytes())
	return d, err
}

// newAsset prepares a file to serve: its content type from its extension, and its ETag.
func newAsset(name string, body []byte) (asset, error) {
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		return asset{}, fmt.Errorf("api: no content type for embedded file %s", name)
	}
	sum := sha256.Sum256(body)
	return asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}, nil
}

// version is the asset's ETag without its quotes: the ?v= of its URL.
func (a asset) version() string { return a.etag[1 : len(a.etag)-1] }

func (s *Server) dashboardRoutes(_ *components) group {
	return group{name: "dashboard", description: "The local dashboard: a page that reads the routes above (with the API key, when one is set) and its files. Always open: it holds no data.", routes: []route{
		{method: http.MethodGet, path: "/", pattern: "/{$}", public: true, handler: http.HandlerFunc(s.serveDashboard), op: operation{
			id: "dashboard", summary: "The dashboard",
			description: "An HTML page: the chain's overview and verification, an entry browser, regression charts, energy and CO2, replay and policy checks, and the layers. " +
				"It loads its data from /api; when a key is set, it asks for it once and keeps it in the tab's session storage.",
			responses: []response{{status: http.StatusOK, description: "An HTML page.", contentType: "text/html", schema: &schema{Type: "string"}}}}},
		{method: http.MethodGet, path: "/assets/{name}", public: true, handler: http.HandlerFunc(s.serveDashboardAsset), op: operation{
			id: "dashboardAsset", summary: "A script, style sheet or icon of the dashboard",
			description: "Asked for with ?v= and the file's version (as the page does), it may be cached for a year; otherwise it is revalidated with its ETag.",
			params: []param{{name: "name", in: "path", description: "file name, e.g. dashboard.js", schema: &schema{Type: "string"}},
				{name: "v", in: "query", description: "the file's version, as the page names it", schema: &schema{Type: "string"}}},
			responses: []response{{status: http.StatusOK, description: "The file.", contentType: "text/javascript",
				alternativeContents: []string{"text/css", "image/svg+xml"}, schema: &schema{Type: "string"}}}}},
	}}
}

func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	serveAsset(w, r, dashboardPage, s.dashboard.page, cacheRevalidate)
}

func (s *Server) serveDashboardAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, ok := s.dashboard.assets[name]
	if !ok {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no asset %s", protocol.Quote(name)))
		return
	}
	cache := cacheRevalidate
	if r.URL.Query().Get(dashboardVersion) == a.version() {
		cache = cacheImmutable
	}
	serveAsset(w, r, name, a, cache)
}

// serveAsset serves a with its content type, its ETag and cache.
func serveAsset(w http.ResponseWriter, r *http.Request, name string, a asset, cache string) {
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("ETag", a.etag)
	w.Header().Set("Cache-Control", cache)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}
