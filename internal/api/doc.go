// Package api serves the local chain service's HTTP interface, the one `cairn serve` runs:
// a JSON REST API under /api over an operator's chain (internal/store), its OpenAPI 3.0
// description at /openapi.json, two pages that render that description offline:
// /docs, with a form that sends requests, and /redoc, a read-only reference, and the
// dashboard at / with its files under /assets/ (routes_dashboard.go, dashboard/): an
// html/template page rendered once at start, plain JavaScript and hand-drawn SVG charts,
// all embedded, which reads the /api routes like any client and asks for the API key
// once when one is set (kept in sessionStorage, sent as a bearer token).
//
// Routes are declared in groups, one file each (routes_meta.go, routes_chain.go,
// routes_export.go, routes_replay.go, routes_analysis.go (regression), routes_energy.go,
// routes_policy.go (policy and containment), routes_consensus.go, routes_layers.go,
// routes_traces.go, routes_dashboard.go; routes_series.go adds GET /api/regression/series,
// a bounded series for charts, to the regression group). A route carries its method and
// path, whether it needs the API key, its handler and its OpenAPI operation, so the mux
// and the document are built from the same table and cannot disagree. A new group is one
// routes_*.go file and one line in Server.groups.
//
// Every answer is JSON, errors included, in the federation's error shape:
// {"error": code, "message": "...", "code": code} (code repeats error for clients of
// earlier releases), with the status
// that fits (400 malformed input, 401 missing key, 403 a browser's request from a page
// of another origin (crossorigin.go), 404, 405, 409, 413 body too large, 415 wrong or
// missing content type, 500, 503 when no model provider is configured for consensus). Request bodies are capped, and unknown JSON fields are
// refused.
//
// When Options.APIKey is set, every route under /api except /api/health and /api/version,
// and the /replay/verify alias and POST /v1/traces, need "Authorization: Bearer <key>".
// /health, /version, /openapi.json, /docs, /redoc, / and /assets/* stay open: the pages
// hold no data.
package api
