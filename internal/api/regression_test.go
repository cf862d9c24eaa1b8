package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// sealOutlier seals a call of gpt-4o with far more input tokens than testBody's.
func (f *fixture) sealOutlier(tokens int64) {
	f.t.Helper()
	last, err := f.store.LastSeq(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	body := testBody(last + 1)
	body.Attributes = map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": tokens}
	if _, err := f.store.Seal(f.t.Context(), []protocol.SpanBody{body}); err != nil {
		f.t.Fatal(err)
	}
}

// sealDocumented seals the chain docs/API.md's examples run on: twelve chat calls a
// minute apart, gpt-4o (odd seqs) and claude-sonnet-4 (even), about 100 input and 55
// output tokens and 0.4 to 0.6 s each, and at seq 6 the planted outlier of 100,000 input
// tokens.
func (f *fixture) sealDocumented() {
	f.t.Helper()
	calls := [12][3]int64{{100, 50, 400}, {103, 55, 437}, {106, 60, 474}, {109, 52, 511}, {101, 57, 548}, {100000, 62, 585},
		{107, 54, 422}, {110, 59, 459}, {102, 51, 496}, {105, 56, 533}, {108, 61, 570}, {100, 53, 407}}
	var bodies []protocol.SpanBody
	for i, c := range calls {
		model := "gpt-4o"
		if i%2 == 1 {
			model = "claude-sonnet-4"
		}
		start := int64(1795262400000000000) + int64(i)*60e9
		bodies = append(bodies, protocol.SpanBody{Name: "chat " + model, Kind: "CLIENT", StatusCode: "OK",
			Attributes:  map[string]any{"gen_ai.request.model": model, "gen_ai.usage.input_tokens": c[0], "gen_ai.usage.output_tokens": c[1]},
			StartTimeNS: start, EndTimeNS: start + c[2]*1e6, TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1)})
	}
	if _, err := f.store.Seal(f.t.Context(), bodies); err != nil {
		f.t.Fatal(err)
	}
}

// documentedRun is POST /api/regression/run's answer as documented.
type documentedRun struct {
	RanAt      string `json:"ran_at"`
	Window     int    `json:"window"`
	Dimensions map[string]struct {
		Mean       float64 `json:"mean"`
		Stdev      float64 `json:"stdev"`
		AnomaliesZ []struct {
			Seq   int64   `json:"seq"`
			Value float64 `json:"value"`
			Z     float64 `json:"z"`
		} `json:"anomalies_z"`
		AnomaliesIQR []struct {
			Seq   int64   `json:"seq"`
			Value float64 `json:"value"`
		} `json:"anomalies_iqr"`
	} `json:"dimensions"`
	TotalAnomalies int `json:"total_anomalies"`
}

// wantDocumentedShape fails unless every documented member of a run is present with its
// JSON type, in every dimension and every anomaly.
func wantDocumentedShape(t *testing.T, body []byte) {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	want := func(where string, m map[string]any, members map[string]string) {
		for name, kind := range members {
			if got := fmt.Sprintf("%T", m[name]); got != kind {
				t.Errorf("%s.%s is %s, want %s", where, name, got, kind)
			}
		}
	}
	want("run", raw, map[string]string{"ran_at": "string", "window": "float64", "dimensions": "map[string]interface {}", "total_anomalies": "float64"})
	dims, _ := raw["dimensions"].(map[string]any)
	if len(dims) != 4 {
		t.Fatalf("dimensions %v", dims)
	}
	for _, name := range analysis.Dimensions {
		d, _ := dims[name].(map[string]any)
		want(name, d, map[string]string{"mean": "float64", "stdev": "float64", "anomalies_z": "[]interface {}", "anomalies_iqr": "[]interface {}"})
		for _, a := range d["anomalies_z"].([]any) {
			want(name+".anomalies_z[]", a.(map[string]any), map[string]string{"seq": "float64", "value": "float64", "z": "float64"})
		}
		for _, a := range d["anomalies_iqr"].([]any) {
			want(name+".anomalies_iqr[]", a.(map[string]any), map[string]string{"seq": "float64", "value": "float64"})
		}
	}
}

func TestRegressionRoutes(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey })
	f.sealDocumented()

	// Without the key, nothing; with it, 404 until a run is saved.
	resp, body := f.do(http.MethodGet, "/api/regression/latest", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	if e := wantError(t, resp, body, http.StatusNotFound, codeNotFound); !strings.Contains(e.Message, "POST /api/regression/run") {
		t.Errorf("404 says %q", e.Message)
	}
	resp, body = f.do(http.MethodGet, "/api/regression/history", "", nil, auth...)
	var history regressionHistory
	decode(t, body, &history)
	if resp.StatusCode != http.StatusOK || len(history.Runs) != 0 || history.Limit != defaultHistoryLimit {
		t.Fatalf("history before any run: %d %s", resp.StatusCode, body)
	}
	resp, body = f.postJSON("/api/regression/run", "", "Authorization", "Bearer wrong")
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	// The documented request: the outlier at seq 6, in the middle of the window, is
	// reported by both tests on input tokens, and by IQR on cost (six priced calls).
	resp, body = f.postJSON("/api/regression/run", `{"window": 12, "z_threshold": 3.0}`, auth...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run: %d %s", resp.StatusCode, body)
	}
	wantDocumentedShape(t, body)
	var doc documentedRun
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	in := doc.Dimensions[analysis.DimInputTokens]
	if len(in.AnomaliesZ) != 1 || in.AnomaliesZ[0].Seq != 6 || in.AnomaliesZ[0].Value != 100000 || !(in.AnomaliesZ[0].Z > 3) ||
		len(in.AnomaliesIQR) != 1 || in.AnomaliesIQR[0].Seq != 6 || in.AnomaliesIQR[0].Value != 100000 || !near(in.Mean, 101151.0/12) {
		t.Errorf("input tokens: %+v", in)
	}
	if cost := doc.Dimensions[analysis.DimCostUSD]; len(cost.AnomaliesIQR) != 1 || cost.AnomaliesIQR[0].Seq != 6 ||
		!near(cost.AnomaliesIQR[0].Value, (100000*0.003+62*0.015)/1000) || len(cost.AnomaliesZ) != 0 {
		t.Errorf("cost: %+v", cost)
	}
	for _, name := range []string{analysis.DimOutputTokens, analysis.DimLatencyMS} {
		if d := doc.Dimensions[name]; len(d.AnomaliesZ)+len(d.AnomaliesIQR) != 0 {
			t.Errorf("%s: %+v", name, d)
		}
	}
	var first analysis.Run
	decode(t, body, &first)
	ranAt, err := time.Parse(time.RFC3339Nano, doc.RanAt)
	if err != nil || !ranAt.Equal(first.RanAt) || doc.Window != 12 || doc.TotalAnomalies != 2 || first.ID != 1 || !first.Flagged ||
		first.FirstSeq != 1 || first.LastSeq != 12 || first.EntriesConsidered != 12 {
		t.Fatalf("first run: %s", body)
	}

	// A clean window, seq 8 to 12, reports nothing (cost has three values: not tested).
	resp, body = f.postJSON("/api/regression/run", `{"window": 5}`, auth...)
	var second analysis.Run
	decode(t, body, &second)
	if resp.StatusCode != http.StatusOK || second.ID != 2 || second.Flagged || second.TotalAnomalies != 0 || second.FirstSeq != 8 ||
		second.ZThreshold != analysis.DefaultZThreshold || second.Dimensions[analysis.DimCostUSD].Status != analysis.StatusInsufficientData {
		t.Fatalf("clean run: %d %s", resp.StatusCode, body)
	}
	wantDocumentedShape(t, body)

	// Both runs are saved: latest is the second, history lists them newest first.
	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	var latest analysis.Run
	decode(t, body, &latest)
	if resp.StatusCode != http.StatusOK || !reflect.DeepEqual(&latest, &second) {
		t.Fatalf("latest: %d %s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		query string
		want  []int64
	}{{"?limit=1", []int64{2}}, {"?limit=2", []int64{2, 1}}, {"?limit=1000", []int64{2, 1}}, {"", []int64{2, 1}}} { // the full list last: it is read below
		query, want := tc.query, tc.want
		resp, body = f.do(http.MethodGet, "/api/regression/history"+query, "", nil, auth...)
		history = regressionHistory{}
		decode(t, body, &history)
		var ids []int64
		for _, r := range history.Runs {
			ids = append(ids, r.ID)
		}
		if resp.StatusCode != http.StatusOK || fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("history%s: %d ids %v, want %v", query, resp.StatusCode, ids, want)
		}
	}
	if !reflect.DeepEqual(history.Runs[1], &first) {
		t.Errorf("history's first run:\n got %+v\nwant %+v", history.Runs[1], first)
	}

	// Bad input: 400 with a JSON error, and nothing saved.
	for name, tc := range map[string]struct {
		body, code string
	}{
		"not JSON":          {`{"window":`, codeBadJSON},
		"an unknown member": {`{"windows": 10}`, codeBadJSON},
		"a string window":   {`{"window": "10"}`, codeBadJSON},
		"a tiny window":     {`{"window": 4}`, codeBadParameter},
		"a negative window": {`{"window": -5}`, codeBadParameter},
		"a huge window":     {`{"window": 100001}`, codeBadParameter},
		"a negative z":      {`{"z_threshold": -1}`, codeBadParameter},
		"a string z":        {`{"z_threshold": "3"}`, codeBadJSON},
	} {
		resp, body := f.postJSON("/api/regression/run", tc.body, auth...)
		if e := wantError(t, resp, body, http.StatusBadRequest, tc.code); e.Message == "" {
			t.Errorf("%s: no message", name)
		}
	}
	for _, query := range []string{"?limit=0", "?limit=1001", "?limit=-1", "?limit=x"} {
		resp, body := f.do(http.MethodGet, "/api/regression/history"+query, "", nil, auth...)
		wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	}
	if runs, err := f.store.RegressionHistory(t.Context(), 10); err != nil || len(runs) != 2 {
		t.Fatalf("saved runs after bad requests: %d, %v", len(runs), err)
	}
}

// The regression run's time is stored with the run: it survives the round trip.
func TestRegressionRunTimeIsUTC(t *testing.T) {
	f := newFixture(t, 6, nil)
	before := time.Now().UTC().Add(-time.Second)
	resp, body := f.postJSON("/api/regression/run", `{}`)
	var run analysis.Run
	decode(t, body, &run)
	if resp.StatusCode != http.StatusOK || run.RanAt.Before(before) || run.RanAt.Location() != time.UTC {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
