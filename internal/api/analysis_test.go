package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

var auth = []string{"Authorization", "Bearer " + testAPIKey}

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
