package api

import (
	"net/http"
)

// codeCrossOrigin is the error code of a state-changing request that a browser sent on
// behalf of a page of another origin.
const codeCrossOrigin = "cross_origin_refused"

// refuseCrossOrigin answers 403 cross_origin_refused to every request other than GET,
// HEAD and OPTIONS that a browser marks as coming from another origin: Sec-Fetch-Site
// other than same-origin or none, or, from a browser too old to send it, an Origin whose
// host is not the request's Host (net/http's CrossOriginProtection). Requests without
// either header (curl, the CLI, OpenTelemetry exporters) are not browsers' and pass, as
// do the dashboard's and /docs' own requests (same-origin).
//
// The API key stops such requests too when there is one; this holds without it. Without
// it, a page the user opens could POST to the loopback service a body the browser sends
// without asking first (a "simple request": a form, a text/plain or typeless body) and,
// though the page cannot read the answer, change what the service holds: save a
// regression run that hides every anomaly, or seal spans into the chain. decodeJSON
// refuses such bodies as well (a body must say application/json), a second wall.
func refuseCrossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, codeCrossOrigin,
			"a page of another origin may not send "+r.Method+" requests to this service: use the dashboard at its own address, or send the request without a browser")
	}))
	return p.Handler(next)
}
