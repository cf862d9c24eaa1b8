package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/store"
)

// defaultHistoryLimit is how many runs GET /api/regression/history lists by default.
const defaultHistoryLimit = 20

// regressionRunRequest is the body of POST /api/regression/run.
type regressionRunRequest struct {
	Window     int     `json:"window,omitempty"`
	ZThreshold float64 `json:"z_threshold,omitempty"`
}

// regressionHistory is the answer of GET /api/regression/history.
type regressionHistory struct {
	Runs  []*analysis.Run `json:"runs" doc:"the runs, newest first; empty when there is none"`
	Limit int             `json:"limit" doc:"the limit applied" example:"20"`
}

func (s *Server) regressionRoutes(c *components) group {
	runReq := c.Ref("RegressionRunRequest", "How to test. Every member is optional.", regressionRunRequest{}, fieldDocs{
		"window": {Description: fmt.Sprintf("how many of the chain's last entries to examine, %d to %d; absent or 0: %d",
			analysis.MinWindow, analysis.MaxWindow, analysis.DefaultWindow), Example: analysis.DefaultWindow},
		"z_threshold": {Description: fmt.Sprintf("an entry is a z anomaly when |z| exceeds this, a positive number; absent or 0: %v",
			analysis.DefaultZThreshold), Example: analysis.DefaultZThreshold},
	})
	c.Ref("RegressionZAnomaly", "An entry whose value lies more than z_threshold standard deviations from the mean.", analysis.ZAnomaly{}, fieldDocs{
		"seq":   {Description: "the entry", Example: 6},
		"value": {Description: "its value of the dimension", Example: 100000},
		"z":     {Description: "(value − mean) / stdev", Example: 3.17},
	})
	c.Ref("RegressionIQRAnomaly", "An entry whose value lies outside Tukey's fences.", analysis.IQRAnomaly{}, fieldDocs{
		"seq":   {Description: "the entry", Example: 6},
		"value": {Description: "its value of the dimension", Example: 100000},
	})
	c.Ref("RegressionDimension", "The test of one dimension: every entry of the window carrying it, tested against the figures of all of them "+
		"(the tested value included).", analysis.Dimension{}, fieldDocs{
		"mean":  {Description: "mean of the window's values; 0 when there is none", Example: 8422.3},
		"stdev": {Description: "sample standard deviation of the window's values (dividing by n−1); 0 with fewer than two", Example: 28836.1},
		"anomalies_z": {Description: "the entries whose |z| exceeds the run's z_threshold, in seq order; empty when stdev is 0 " +
			"(z undefined) or the dimension was not tested"},
		"anomalies_iqr": {Description: "the entries below q1 − 1.5·iqr or above q3 + 1.5·iqr, in seq order; empty when not tested"},
		"status": {Description: fmt.Sprintf("ok: tested; insufficient_data: fewer than %d values, nothing tested", analysis.MinValues),
			Enum: []string{analysis.StatusOK, analysis.StatusInsufficientData}},
		"n":               {Description: "entries of the window carrying the dimension", Example: 12},
		"q1":              {Description: "first quartile, by linear interpolation; 0 when not tested", Example: 101.75},
		"q3":              {Description: "third quartile, by linear interpolation; 0 when not tested", Example: 107.25},
		"iqr":             {Description: "q3 − q1", Example: 5.5},
		"lower_fence":     {Description: "q1 − 1.5·iqr", Example: 93.5},
		"upper_fence":     {Description: "q3 + 1.5·iqr", Example: 115.5},
		"flagged_entries": {Description: "entries either test flagged, each counted once", Example: 1},
		"flagged":         {Description: "flagged_entries > 0"},
	})
	run := c.Ref("RegressionRun", "One regression run over the chain's last entries.", analysis.Run{}, fieldDocs{
		"id":                 {Description: "the run's number in the chain's database, from 1", Example: 3},
		"ran_at":             {Description: "when the run began, RFC 3339 UTC", Example: "2026-11-21T12:30:00Z"},
		"window":             {Description: "the window asked for", Example: analysis.DefaultWindow},
		"z_threshold":        {Description: "the |z| above which the z-test fires", Example: analysis.DefaultZThreshold},
		"min_values":         {Description: "the fewest values a dimension needs in the window to be tested", Example: analysis.MinValues},
		"entries_considered": {Description: "entries read: at most window", Example: 12},
		"first_seq":          {Description: "first entry read; 0 for an empty chain", Example: 1},
		"last_seq":           {Description: "last entry read; 0 for an empty chain", Example: 12},
		"dimensions":         {Description: "the test of each dimension, by name: input_tokens, output_tokens, cost_usd, latency_ms"},
		"total_anomalies":    {Description: "the sum of the dimensions' flagged_entries: an entry flagged on a dimension counts once there, whichever tests fired", Example: 1},
		"flagged":            {Description: "total_anomalies > 0"},
	})
	history := c.Ref("RegressionHistory", "Saved regression runs.", regressionHistory{}, nil)
	minLimit, maxLimit := 1.0, float64(store.MaxRegressionHistory)
	return group{name: "regression", description: "Drift of the calls' tokens, cost and latency.", routes: []route{
		{method: http.MethodGet, path: "/api/regression/latest", handler: http.HandlerFunc(s.latestRegression), op: operation{
			id: "latestRegression", summary: "The latest regression run",
			description: "The run saved last. 404 not_found when no run was saved yet: POST /api/regression/run makes one.",
			responses:   []response{jsonOK("The run.", run)}}},
		{method: http.MethodGet, path: "/api/regression/history", handler: http.HandlerFunc(s.regressionHistory), op: operation{
			id: "regressionHistory", summary: "Saved regression runs", description: "The last runs saved, newest first.",
			params: []param{{name: "limit", in: "query", description: "how many runs",
				schema: &schema{Type: "integer", Format: "int64", Minimum: &minLimit, Maximum: &maxLimit, Default: defaultHistoryLimit}}},
			responses: []response{jsonOK("The runs.", history)}}},
		{method: http.MethodPost, path: "/api/regression/run", handler: http.HandlerFunc(s.runRegression), op: operation{
			id: "runRegression", summary: "Run a regression test and save it",
			description: "Examines every entry of the chain's last window entries on input tokens, output tokens, cost and latency, " +
				"with a z-score (|z| > z_threshold, mean and sample standard deviation of the window) and Tukey's IQR fences " +
				"(quartiles by linear interpolation), and lists each test's anomalies with their seqs; a dimension is flagged when either fires. " +
				"cost_usd is the span's gen_ai.usage.cost_usd (or cairn.cost_usd), else computed from the model's list price and both token counts; " +
				"an entry with neither gives no cost. " +
				"The run is saved in the chain's database and returned. A flagged run is still a 200 answer.",
			body:      jsonBody("The options; an empty body uses the defaults.", false, runReq),
			responses: []response{jsonOK("The run, with its id.", run)}}},
		s.seriesRoute(c),
	}}
}

func (s *Server) latestRegression(w http.ResponseWriter, r *http.Request) {
	if run, ok := s.latestRun(w, r, "read the latest regression run"); ok {
		writeJSON(w, http.StatusOK, run)
	}
}

// latestRun reads the regression run saved last; without one it answers 404 (on an
// error, 500, logged as what) and ok is false.
func (s *Server) latestRun(w http.ResponseWriter, r *http.Request, what string) (run *analysis.Run, ok bool) {
	run, err := s.store.LatestRegression(r.Context())
	if errors.Is(err, store.ErrNoRegressionRun) {
		writeError(w, http.StatusNotFound, codeNotFound, "no regression run was saved yet: POST /api/regression/run makes one")
		return nil, false
	}
	if err != nil {
		s.internalError(w, r, what, err)
		return nil, false
	}
	return run, true
}

func (s *Server) regressionHistory(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", defaultHistoryLimit, store.MaxRegressionHistory)
	if err == nil && limit == 0 {
		err = badRequest(codeBadParameter, "limit 0: want 1 to %d runs", store.MaxRegressionHistory)
	}
	if err != nil {
		s.writeRequestError(w, r, "regression history", err)
		return
	}
	runs, err := s.store.RegressionHistory(r.Context(), limit)
	if err != nil {
		s.internalError(w, r, "regression history", err)
		return
	}
	writeJSON(w, http.StatusOK, regressionHistory{Runs: runs, Limit: limit})
}

func (s *Server) runRegression(w http.ResponseWriter, r *http.Request) {
	var req regressionRunRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		s.writeRequestError(w, r, "regression run", err)
		return
	}
	run, err := analysis.RunRegression(r.Context(), s.store, analysis.RegressionOptions{Window: req.Window, ZThreshold: req.ZThreshold})
	if errors.Is(err, store.ErrNoSecret) {
		writeError(w, http.StatusConflict, codeNoSecret, "the chain was opened without its HMAC secret, so the run cannot be saved")
		return
	}
	if err != nil {
		s.analysisError(w, r, "regression run", err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}
