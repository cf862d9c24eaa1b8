package api

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// defaultSeriesPoints is how many points GET /api/regression/series gives by default.
const defaultSeriesPoints = 120

// dimensionUnits are the units of the regression dimensions' values.
var dimensionUnits = map[string]string{analysis.DimInputTokens: "tokens", analysis.DimOutputTokens: "tokens",
	analysis.DimCostUSD: "USD", analysis.DimLatencyMS: "ms"}

// seriesPoint is a bucket of GET /api/regression/series, with its time.
type seriesPoint struct {
	analysis.SeriesPoint
	Time string `json:"time" doc:"timestamp of first_seq's entry, RFC 3339 UTC; empty when its column is not an integer (only tampering makes one)" example:"\"2026-11-21T12:00:01Z\""`
}

// seriesResponse is the answer of GET /api/regression/series.
type seriesResponse struct {
	RunID             int64                 `json:"run_id" doc:"the regression run whose window and anomalies these are: the latest saved" example:"3"`
	RanAt             string                `json:"ran_at" doc:"when that run began, RFC 3339 UTC" example:"\"2026-11-21T12:30:00Z\""`
	Dimension         string                `json:"dimension" enum:"input_tokens,output_tokens,cost_usd,latency_ms" doc:"the dimension"`
	Unit              string                `json:"unit" enum:"tokens,USD,ms" doc:"the unit of its values"`
	FirstSeq          int64                 `json:"first_seq" doc:"the run's window: its first entry; 0 for an empty window" example:"1"`
	LastSeq           int64                 `json:"last_seq" doc:"the run's window: its last entry" example:"12"`
	ZThreshold        float64               `json:"z_threshold" doc:"the run's z_threshold" example:"3"`
	Status            string                `json:"status" enum:"ok,insufficient_data" doc:"the run's status for the dimension"`
	Mean              float64               `json:"mean" doc:"the run's mean of the window's values" example:"8422.3"`
	Stdev             float64               `json:"stdev" doc:"the run's sample standard deviation" example:"28836.1"`
	LowerFence        float64               `json:"lower_fence" doc:"the run's q1 − 1.5·iqr" example:"93.5"`
	UpperFence        float64               `json:"upper_fence" doc:"the run's q3 + 1.5·iqr" example:"115.5"`
	Points            []seriesPoint         `json:"points" doc:"at most points buckets of equal seq ranges over the window, oldest first; buckets without a value are left out"`
	AnomaliesZ        []analysis.ZAnomaly   `json:"anomalies_z" doc:"at most points of the run's z anomalies of the dimension, largest |z| first"`
	AnomaliesIQR      []analysis.IQRAnomaly `json:"anomalies_iqr" doc:"at most points of the run's IQR anomalies, farthest beyond a fence first"`
	AnomaliesZTotal   int                   `json:"anomalies_z_total" doc:"all of the run's z anomalies of the dimension" example:"1"`
	AnomaliesIQRTotal int                   `json:"anomalies_iqr_total" doc:"all of its IQR anomalies" example:"1"`
}

// seriesRoute is GET /api/regression/series, part of the regression group.
func (s *Server) seriesRoute(c *components) route {
	c.Ref("RegressionSeriesPoint", "A bucket of a dimension's values: the window's entries from first_seq to last_seq carrying it.", seriesPoint{}, fieldDocs{
		"first_seq":     {Description: "first entry of the bucket carrying the dimension", Example: 1},
		"last_seq":      {Description: "last entry of the bucket carrying the dimension", Example: 1},
		"n":             {Description: "entries summarized", Example: 1},
		"mean":          {Description: "mean of their values", Example: 412},
		"min":           {Description: "least of their values", Example: 412},
		"max":           {Description: "greatest of their values", Example: 412},
		"anomalies_z":   {Description: "entries of the bucket the z-test flagged", Example: 0},
		"anomalies_iqr": {Description: "entries of the bucket the IQR test flagged", Example: 0},
	})
	res := c.Ref("RegressionSeries", "A dimension of the latest run's window, cut into a bounded number of points, with its anomalies.", seriesResponse{}, nil)
	minPoints, maxPoints := 1.0, float64(analysis.MaxSeriesPoints)
	return route{method: http.MethodGet, path: "/api/regression/series", handler: http.HandlerFunc(s.regressionSeries), op: operation{
		id: "regressionSeries", summary: "A dimension over the latest run's window, for a chart",
		description: "Reads again the window of the latest saved run and cuts the dimension's values into at most points buckets of equal seq ranges " +
			"(n, mean, min, max and the anomalies of each test in each), with the run's mean, deviation and fences and at most points of its anomalies of each test, " +
			"the farthest out first. The answer's size depends on points, not on the window. 404 not_found when no run was saved yet.",
		params: []param{
			{name: "dimension", in: "query", description: "the dimension", required: true,
				schema: &schema{Type: "string", Enum: analysis.Dimensions}},
			{name: "points", in: "query", description: "the most buckets and anomalies of each test to return",
				schema: &schema{Type: "integer", Format: "int64", Minimum: &minPoints, Maximum: &maxPoints, Default: defaultSeriesPoints}},
		},
		responses: []response{jsonOK("The series.", res)}}}
}

func (s *Server) regressionSeries(w http.ResponseWriter, r *http.Request) {
	dim := r.URL.Query().Get("dimension")
	points, err := queryInt(r, "points", defaultSeriesPoints, analysis.MaxSeriesPoints)
	switch {
	case err != nil:
	case !slices.Contains(analysis.Dimensions, dim):
		err = badRequest(codeBadParameter, "dimension %s: want one of %v", protocol.Quote(dim), analysis.Dimensions)
	case points == 0:
		err = badRequest(codeBadParameter, "points 0: want 1 to %d", analysis.MaxSeriesPoints)
	}
	if err != nil {
		s.writeRequestError(w, r, "regression series", err)
		return
	}
	run, ok := s.latestRun(w, r, "regression series")
	if !ok {
		return
	}
	d := run.Dimensions[dim]
	if d == nil {
		d = &analysis.Dimension{Status: analysis.StatusInsufficientData}
	}
	res := seriesResponse{RunID: run.ID, RanAt: run.RanAt.UTC().Format(time.RFC3339), Dimension: dim, Unit: dimensionUnits[dim],
		FirstSeq: run.FirstSeq, LastSeq: run.LastSeq, ZThreshold: run.ZThreshold, Status: d.Status, Mean: d.Mean, Stdev: d.Stdev,
		LowerFence: d.LowerFence, UpperFence: d.UpperFence, Points: []seriesPoint{},
		AnomaliesZTotal: len(d.AnomaliesZ), AnomaliesIQRTotal: len(d.AnomaliesIQR)}
	res.AnomaliesZ, res.AnomaliesIQR = d.Extremes(points)
	if run.FirstSeq > 0 {
		if err := s.fillSeries(r, &res, d, points); err != nil {
			s.analysisError(w, r, "regression series", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// fillSeries reads the run's window again and sets res.Points.
func (s *Server) fillSeries(r *http.Request, res *seriesResponse, d *analysis.Dimension, points int) error {
	entries, err := s.store.RegressionRange(r.Context(), res.FirstSeq, res.LastSeq)
	if err != nil {
		return fmt.Errorf("read the run's window: %w", err)
	}
	buckets, err := analysis.Series(entries, res.Dimension, points, d)
	if err != nil {
		return err
	}
	seqs := make([]int64, len(buckets))
	for i, b := range buckets {
		seqs[i] = b.FirstSeq
	}
	times, err := s.store.Timestamps(r.Context(), seqs)
	if err != nil {
		return err
	}
	for _, b := range buckets {
		p := seriesPoint{SeriesPoint: b}
		if ns, ok := times[b.FirstSeq]; ok {
			p.Time = time.Unix(0, ns).UTC().Format(time.RFC3339)
		}
		res.Points = append(res.Points, p)
	}
	return nil
}
