package api

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// assetFS holds the pages /docs and /redoc and the scripts, styles and icon they load,
// all written for this service: nothing is fetched from elsewhere.
//
//go:embed assets
var assetFS embed.FS

// pageCSP allows the pages to load only what this server serves.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// asset is an embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// loadAssets reads the embedded files.
func loadAssets() (map[string]asset, error) {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		return nil, fmt.Errorf("api: read embedded pages: %w", err)
	}
	assets := map[string]asset{}
	for _, e := range entries {
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("api: read embedded page %s: %w", e.Name(), err)
		}
		if assets[e.Name()], err = newAsset(e.Name(), body); err != nil {
			return nil, err
		}
	}
	for _, page := range []string{"docs.html", "redoc.html"} {
		if _, ok := assets[page]; !ok {
			return nil, fmt.Errorf("api: embedded page %s is missing", page)
		}
	}
	return assets, nil
}

// healthResponse is the answer of /health and /api/health: the documented status,
// version, db and db_exists.
type healthResponse struct {
	Status   string `json:"status" enum:"ok" doc:"ok whenever the server answers"`
	Version  string `json:"version" doc:"the server's version" example:"\"v0.4.0\""`
	DB       string `json:"db" doc:"path of the chain's SQLite file" example:"\"chain.db\""`
	DBExists bool   `json:"db_exists" doc:"whether that file exists" example:"true"`
}

// versionResponse is the answer of /version.
type versionResponse struct {
	Version   string `json:"version" doc:"the release, or (devel)" example:"\"v0.4.0\""`
	Package   string `json:"package" enum:"cairn" doc:"the program that answers: cairn"`
	GoVersion string `json:"go_version" doc:"the Go toolchain that built the server" example:"\"go1.26.0\""`
	Platform  string `json:"platform" doc:"operating system/architecture" example:"\"linux/amd64\""`
}

func (s *Server) metaRoutes(c *components) group {
	health := c.Ref("Health", "Liveness of the server.", healthResponse{}, nil)
	ver := c.Ref("Version", "The server's build.", versionResponse{}, nil)
	healthOp := func(id string) operation {
		return operation{id: id, summary: "Liveness",
			description: "Answers 200 while the server runs, with its version and whether the chain's file exists. Never needs the API key.",
			responses:   []response{jsonOK("The server is alive.", health)}}
	}
	versionOp := func(id string) operation {
		return operation{id: id, summary: "Version", description: "The server's release, Go version and platform. Never needs the API key.",
			responses: []response{jsonOK("The build.", ver)}}
	}
	htmlOp := func(id, summary, description string) operation {
		return operation{id: id, summary: summary, description: description,
			responses: []response{{status: http.StatusOK, description: "An HTML page.", contentType: "text/html", schema: &schema{Type: "string"}}}}
	}
	return group{name: "service", description: "Liveness, version, this document and the pages that render it. Always open.", routes: []route{
		{method: http.MethodGet, path: "/health", public: true, handler: http.HandlerFunc(s.serveHealth), op: healthOp("health")},
		{method: http.MethodGet, path: "/api/health", public: true, handler: http.HandlerFunc(s.serveHealth), op: healthOp("apiHealth")},
		{method: http.MethodGet, path: "/version", public: true, handler: http.HandlerFunc(s.serveVersion), op: versionOp("version")},
		{method: http.MethodGet, path: "/api/version", public: true, handler: http.HandlerFunc(s.serveVersion), op: versionOp("apiVersion")},
		{method: http.MethodGet, path: "/openapi.json", public: true, handler: http.HandlerFunc(s.serveOpenAPI), op: operation{
			id: "openAPI", summary: "This document", description: "The OpenAPI 3.0 description of every route the server serves.",
			responses: []response{jsonOK("The OpenAPI document.", &schema{Type: "object"})}}},
		{method: http.MethodGet, path: "/docs", public: true, handler: s.page("docs.html"),
			op: htmlOp("docsPage", "Interactive documentation", "Every operation of /openapi.json by tag, with a form that sends the request (and the API key, if given) and shows the answer.")},
		{method: http.MethodGet, path: "/redoc", public: true, handler: s.page("redoc.html"),
			op: htmlOp("referencePage", "Reference documentation", "A read-only reference of /openapi.json: operations, parameters, bodies, answers and schemas.")},
		{method: http.MethodGet, path: "/docs/assets/{name}", public: true, handler: http.HandlerFunc(s.serveAsset), op: operation{
			id: "docsAsset", summary: "A script, style sheet or icon of the pages",
			params: []param{{name: "name", in: "path", description: "file name, e.g. docs.js", schema: &schema{Type: "string"}}},
			responses: []response{{status: http.StatusOK, description: "The file.", contentType: "text/javascript",
				alternativeContents: []string{"text/css", "image/svg+xml"}, schema: &schema{Type: "string"}}}}},
	}}
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	_, err := os.Stat(s.dbPath)
	writeJSON(w, http.StatusOK, healthResponse{Status: "ok", Version: s.version.Version, DB: s.dbPath,
		DBExists: s.dbPath != "" && err == nil})
}

func (s *Server) serveVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, versionResponse{Version: s.version.Version, Package: "cairn", GoVersion: s.version.GoVersion, Platform: s.version.Platform})
}

// page serves an embedded HTML page, allowed to load only what this server serves.
func (s *Server) page(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		w.Header().Set("Referrer-Policy", "no-referrer")
		s.serveFile(w, r, name)
	})
}

func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, ok := s.assets[name]; !ok || path.Ext(name) == ".html" {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no asset %s", protocol.Quote(name)))
		return
	}
	s.serveFile(w, r, name)
}

// serveFile serves an embedded file with its ETag, so browsers revalidate cheaply.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	serveAsset(w, r, name, s.assets[name], cacheRevalidate)
}
