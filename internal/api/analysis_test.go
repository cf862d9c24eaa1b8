package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

var auth = []string{"Authorization", "Bearer " + testAPIKey}

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

func TestRegressionRoutes(t *testing.T) {
	f := newFixture(t, 12, func(o *Options) { o.APIKey = testAPIKey })

	// Without the key, nothing; with it, 404 until a run is saved.
	resp, body := f.do(http.MethodGet, "/api/regression/latest", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	if e := wantError(t, resp, body, http.StatusNotFound, codeNotFound); !strings.Contains(e.Error, "POST /api/regression/run") {
		t.Errorf("404 says %q", e.Error)
	}
	resp, body = f.do(http.MethodGet, "/api/regression/history", "", nil, auth...)
	var history regressionHistory
	decode(t, body, &history)
	if resp.StatusCode != http.StatusOK || len(history.Runs) != 0 || history.Limit != defaultHistoryLimit {
		t.Fatalf("history before any run: %d %s", resp.StatusCode, body)
	}
	resp, body = f.postJSON("/api/regression/run", "", "Authorization", "Bearer wrong")
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	// A run over testBody's steady window flags nothing and is saved.
	resp, body = f.postJSON("/api/regression/run", "", auth...)
	var first analysis.Run
	decode(t, body, &first)
	if resp.StatusCode != http.StatusOK || first.ID != 1 || first.Flagged || first.EntriesConsidered != 12 ||
		first.Window != analysis.DefaultWindow || first.LastSeq != 12 || len(first.Dimensions) != 4 {
		t.Fatalf("first run: %d %s", resp.StatusCode, body)
	}
	input := first.Dimensions[0]
	if input.Name != analysis.DimInputTokens || input.Status != analysis.StatusOK || input.Stats == nil || input.Value != 12 || input.N != 12 {
		t.Fatalf("input tokens: %+v", input)
	}

	// An outlier, tested over a window of 8 with a lower threshold, is flagged.
	f.sealOutlier(5000)
	resp, body = f.postJSON("/api/regression/run", `{"window": 8, "z_threshold": 2.5}`, auth...)
	var second analysis.Run
	decode(t, body, &second)
	if resp.StatusCode != http.StatusOK || second.ID != 2 || !second.Flagged || second.Window != 8 || second.ZThreshold != 2.5 ||
		second.FirstSeq != 6 || second.LastSeq != 13 || !second.Dimensions[0].ZFlagged || !second.Dimensions[0].IQRFlagged {
		t.Fatalf("second run: %d %s", resp.StatusCode, body)
	}

	resp, body = f.do(http.MethodGet, "/api/regression/latest", "", nil, auth...)
	var latest analysis.Run
	decode(t, body, &latest)
	if resp.StatusCode != http.StatusOK || latest.ID != 2 || !latest.Flagged || !latest.StartedAt.Equal(second.StartedAt) {
		t.Fatalf("latest: %d %s", resp.StatusCode, body)
	}
	for query, want := range map[string][]int64{"": {2, 1}, "?limit=1": {2}, "?limit=1000": {2, 1}} {
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

	// Bad input: 400 with a JSON error, and nothing saved.
	for name, tc := range map[string]struct {
		path, body, code string
	}{
		"not JSON":          {"/api/regression/run", `{"window":`, codeBadJSON},
		"an unknown member": {"/api/regression/run", `{"windows": 10}`, codeBadJSON},
		"a string window":   {"/api/regression/run", `{"window": "10"}`, codeBadJSON},
		"a tiny window":     {"/api/regression/run", `{"window": 3}`, codeBadParameter},
		"a huge window":     {"/api/regression/run", `{"window": 100001}`, codeBadParameter},
		"a negative z":      {"/api/regression/run", `{"z_threshold": -1}`, codeBadParameter},
	} {
		resp, body := f.postJSON(tc.path, tc.body, auth...)
		if e := wantError(t, resp, body, http.StatusBadRequest, tc.code); e.Error == "" {
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

// near reports whether a and b agree to a relative 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestEnergySummary(t *testing.T) {
	f := newFixture(t, 12, func(o *Options) { o.APIKey = testAPIKey; o.DefaultRegion = "us-east" })
	resp, body := f.do(http.MethodGet, "/api/energy/summary", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	// testBody's calls are gpt-4o (0.6 Wh per 1000 tokens) with 1+2+...+12 = 78 input
	// tokens, and name no region.
	const tokens, wh = 78, 78.0 / 1000 * 0.6
	tests := map[string]struct {
		query     string
		region    string
		intensity float64
		known     bool
	}{
		"the server's default region": {query: "", region: "us-east", intensity: 380, known: true},
		"a region asked for":          {query: "?region=eu-north", region: "eu-north", intensity: 30, known: true},
		"no region":                   {query: "?region=", region: "", intensity: analysis.FallbackGridIntensity},
		"an unknown region":           {query: "?region=mars", region: "mars", intensity: analysis.FallbackGridIntensity},
		"an override":                 {query: "?intensity=us-east%3D200,eu-west%3D100", region: "us-east", intensity: 200, known: true},
		"repeated overrides":          {query: "?region=eu-west&intensity=us-east%3D200&intensity=EU-West%3D100", region: "eu-west", intensity: 100, known: true},
		"an override of an unknown":   {query: "?region=mars&intensity=" + url.QueryEscape("mars=12.5"), region: "mars", intensity: 12.5, known: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.do(http.MethodGet, "/api/energy/summary"+tc.query, "", nil, auth...)
			var sum analysis.EnergySummary
			decode(t, body, &sum)
			if resp.StatusCode != http.StatusOK || sum.Entries != 12 || sum.Tokens != tokens || !near(sum.Wh, wh) ||
				!near(sum.CO2g, wh/1000*tc.intensity) || sum.DefaultRegion != tc.region {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if len(sum.ByRegion) != 1 || sum.ByRegion[0].Name != tc.region || sum.ByRegion[0].Known != tc.known ||
				len(sum.ByModel) != 1 || sum.ByModel[0].Name != "gpt-4o" || !sum.ByModel[0].Known {
				t.Fatalf("breakdown: %s", body)
			}
			if wantFallback := int64(12); !tc.known && (sum.RegionFallbackEntries != wantFallback || len(sum.Notes) != 1) {
				t.Fatalf("fallback not reported: %s", body)
			}
		})
	}
	for _, query := range []string{"?intensity=us-east", "?intensity=us-east%3D", "?intensity=%3D200", "?intensity=us-east%3Dlots",
		"?intensity=us-east%3D200,", "?intensity=us-east%3D5000", "?intensity=us-east%3D-1", "?intensity=us-east%3DNaN",
		"?intensity=us-east%3D1,US-EAST%3D2", "?region=" + strings.Repeat("r", analysis.MaxNameBytes+1)} {
		resp, body := f.do(http.MethodGet, "/api/energy/summary"+query, "", nil, auth...)
		wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
	}
	var many []string
	for i := range analysis.MaxIntensityOverrides + 1 {
		many = append(many, fmt.Sprintf("r%d=1", i))
	}
	resp, body = f.do(http.MethodGet, "/api/energy/summary?intensity="+url.QueryEscape(strings.Join(many, ",")), "", nil, auth...)
	wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
}

func TestEnergyEstimate(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey; o.DefaultRegion = "eu-west" })
	resp, body := f.postJSON("/api/energy/estimate", `{"model":"gpt-4o","tokens":1000}`)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	tests := map[string]struct {
		body      string
		want      analysis.EnergyRequest // what the estimate must equal analysis.EstimateEnergy's of
		fallbacks int
	}{
		"the server's region":   {body: `{"model":"gpt-4o","tokens":1000}`, want: analysis.EnergyRequest{Model: "gpt-4o", Tokens: ptr(int64(1000)), Region: "eu-west"}},
		"a blank region":        {body: `{"model":"gpt-4o","tokens":1000,"region":" "}`, want: analysis.EnergyRequest{Model: "gpt-4o", Tokens: ptr(int64(1000)), Region: "eu-west"}},
		"the request's region":  {body: `{"model":"gpt-4o","input_tokens":700,"output_tokens":300,"region":"eu-north-1"}`, want: analysis.EnergyRequest{Model: "gpt-4o", InputTokens: ptr(int64(700)), OutputTokens: ptr(int64(300)), Region: "eu-north-1"}},
		"an unknown model":      {body: `{"model":"my-model","tokens":10}`, want: analysis.EnergyRequest{Model: "my-model", Tokens: ptr(int64(10)), Region: "eu-west"}, fallbacks: 1},
		"an unknown region too": {body: `{"tokens":10,"region":"moon"}`, want: analysis.EnergyRequest{Tokens: ptr(int64(10)), Region: "moon"}, fallbacks: 2},
		"an override": {body: `{"model":"gpt-4o","tokens":1000,"intensity_overrides":{"eu-west":120}}`,
			want: analysis.EnergyRequest{Model: "gpt-4o", Tokens: ptr(int64(1000)), Region: "eu-west", IntensityOverrides: map[string]float64{"eu-west": 120}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/energy/estimate", tc.body, auth...)
			var got analysis.EnergyEstimate
			decode(t, body, &got)
			want, err := analysis.EstimateEnergy(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || fmt.Sprint(got) != fmt.Sprint(want) || len(got.Fallbacks) != tc.fallbacks {
				t.Fatalf("%d %s\nwant %+v", resp.StatusCode, body, want)
			}
		})
	}
	for name, tc := range map[string]struct{ body, code string }{
		"not JSON":           {`{"tokens":`, codeBadJSON},
		"an empty body":      {``, codeBadJSON},
		"an unknown member":  {`{"tokens":1,"watts":2}`, codeBadJSON},
		"fractional tokens":  {`{"tokens":1.5}`, codeBadJSON},
		"two JSON objects":   {`{"tokens":1}{"tokens":2}`, codeBadJSON},
		"no tokens":          {`{"model":"gpt-4o"}`, codeBadParameter},
		"both ways":          {`{"tokens":1,"input_tokens":1}`, codeBadParameter},
		"negative tokens":    {`{"tokens":-1}`, codeBadParameter},
		"a bad override":     {`{"tokens":1,"intensity_overrides":{"x":-5}}`, codeBadParameter},
		"a long model name":  {`{"tokens":1,"model":"` + strings.Repeat("m", analysis.MaxNameBytes+1) + `"}`, codeBadParameter},
		"too many tokens":    {fmt.Sprintf(`{"tokens":%d}`, int64(analysis.MaxRequestTokens)+1), codeBadParameter},
		"an array of things": {`[{"tokens":1}]`, codeBadJSON},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/energy/estimate", tc.body, auth...)
			wantError(t, resp, body, http.StatusBadRequest, tc.code)
		})
	}
	resp, body = f.do(http.MethodPost, "/api/energy/estimate", "text/plain", strings.NewReader(`{"tokens":1}`), auth...)
	wantError(t, resp, body, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	huge := `{"model":"` + strings.Repeat("m", maxJSONBodyBytes) + `","tokens":1}`
	resp, body = f.postJSON("/api/energy/estimate", huge, auth...)
	wantError(t, resp, body, http.StatusRequestEntityTooLarge, codeBodyTooLarge)
}

func ptr[T any](v T) *T { return &v }

// The regression run's time is stored with the run: it survives the round trip.
func TestRegressionRunTimeIsUTC(t *testing.T) {
	f := newFixture(t, 6, nil)
	before := time.Now().UTC().Add(-time.Second)
	resp, body := f.postJSON("/api/regression/run", `{}`)
	var run analysis.Run
	decode(t, body, &run)
	if resp.StatusCode != http.StatusOK || run.StartedAt.Before(before) || run.StartedAt.Location() != time.UTC {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
