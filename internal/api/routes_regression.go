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
		"window": {Description: fmt.Sprintf("how many of the chain's last entries to read, %d to %d; absent or 0: %d",
			analysis.MinBaseline+1, analysis.MaxWindow, analysis.DefaultWindow), Example: analysis.DefaultWindow},
		"z_threshold": {Description: fmt.Sprintf("a dimension is flagged when |z| exceeds this, a positive number; absent or 0: %v",
			analysis.DefaultZThreshold), Example: analysis.DefaultZThreshold},
	})
	c.Ref("RegressionDimension", "The test of one dimension: is the newest value an outlier against the earlier values of the window? "+
		"The figures (value to upper_fence) are present only when status is ok.", analysis.Dimension{}, fieldDocs{
		"name":        {Description: "the dimension", Enum: []string{analysis.DimInputTokens, analysis.DimOutputTokens, analysis.DimCostUSD, analysis.DimLatencyMS}},
		"status":      {Description: fmt.Sprintf("ok: tested; insufficient_data: fewer than %d earlier values, nothing tested", analysis.MinBaseline), Enum: []string{analysis.StatusOK, analysis.StatusInsufficientData}},
		"n":           {Description: "entries of the window carrying the dimension: the baseline and the candidate", Example: 100},
		"seq":         {Description: "the candidate's entry (the newest value); 0 when the window holds no value", Example: 100},
		"value":       {Description: "the candidate value", Example: 412},
		"mean":        {Description: "mean of the baseline (the earlier values)", Example: 398.5},
		"stddev":      {Description: "sample standard deviation of the baseline (dividing by n−1)", Example: 21.2},
		"z":           {Description: "(value − mean) / stddev; null when stddev is 0, and the z-test then does not fire", Nullable: true, Example: 0.64},
		"q1":          {Description: "first quartile of the baseline, by linear interpolation", Example: 384},
		"q3":          {Description: "third quartile of the baseline, by linear interpolation", Example: 411},
		"iqr":         {Description: "q3 − q1", Example: 27},
		"lower_fence": {Description: "q1 − 1.5·iqr", Example: 343.5},
		"upper_fence": {Description: "q3 + 1.5·iqr", Example: 451.5},
		"z_flagged":   {Description: "|z| exceeds the run's z_threshold"},
		"iqr_flagged": {Description: "the value lies outside the fences"},
		"flagged":     {Description: "z_flagged or iqr_flagged"},
	})
	run := c.Ref("RegressionRun", "One regression run over the chain's last entries.", analysis.Run{}, fieldDocs{
		"id":                 {Description: "the run's number in the chain's database, from 1", Example: 3},
		"started_at":         {Description: "when the run began, RFC 3339 UTC", Example: "2026-11-21T12:30:00Z"},
		"window":             {Description: "the window asked for", Example: analysis.DefaultWindow},
		"z_threshold":        {Description: "the |z| above which the z-test fires", Example: analysis.DefaultZThreshold},
		"min_baseline":       {Description: "the fewest earlier values a dimension needs to be tested", Example: analysis.MinBaseline},
		"entries_considered": {Description: "entries read: at most window", Example: 100},
		"first_seq":          {Description: "first entry read; 0 for an empty chain", Example: 1},
		"last_seq":           {Description: "last entry read; 0 for an empty chain", Example: 100},
		"dimensions":         {Description: "one test per dimension: input_tokens, output_tokens, cost_usd, latency_ms"},
		"flagged":            {Description: "some dimension is flagged"},
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
			description: "Tests the newest value of input tokens, output tokens, cost and latency against the earlier values of the window, " +
				"with a z-score (sample standard deviation) and Tukey's IQR fences (quartiles by linear interpolation); a dimension is flagged when either fires. " +
				"The run is saved in the chain's database and returned. A flagged run is still a 200 answer.",
			body:      jsonBody("The options; an empty body uses the defaults.", false, runReq),
			responses: []response{jsonOK("The run, with its id.", run)}}},
	}}
}

func (s *Server) latestRegression(w http.ResponseWriter, r *http.Request) {
	run, err := s.store.LatestRegression(r.Context())
	if errors.Is(err, store.ErrNoRegressionRun) {
		writeError(w, http.StatusNotFound, codeNotFound, "no regression run was saved yet: POST /api/regression/run makes one")
		return
	}
	if err != nil {
		s.internalError(w, r, "read the latest regression run", err)
		return
	}
	writeJSON(w, http.StatusOK, run)
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
