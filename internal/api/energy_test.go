package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// near reports whether a and b agree to a relative 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// energyCall is a call of the energy tests' chain, with the documented rate of its model
// and intensity of its region (after the server's overrides), written out by hand.
type energyCall struct {
	model, region   string // region "" names none
	tokens          int64
	rate, intensity float64
}

// energyChain: calls of two known models and an unknown one, in a region of the table, a
// prefix of one, the server's default (no region), an unknown region and a custom one
// that the server's overrides define (on-prem, 20 g/kWh).
var energyChain = []energyCall{
	{model: "gpt-4o", region: "us-east-1", tokens: 1000, rate: 0.005, intensity: 380},
	{model: "claude-sonnet-4", region: "eu-north", tokens: 2000, rate: 0.003, intensity: 30},
	{model: "claude-sonnet-4", region: "", tokens: 1000, rate: 0.003, intensity: 380},
	{model: "my-model", region: "mars", tokens: 500, rate: 0.003, intensity: 450},
	{model: "gpt-4o", region: "on-prem", tokens: 2000, rate: 0.005, intensity: 20},
}

// energyFixture serves energyChain with default region us-east and the server's
// override on-prem=20.
func energyFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, 0, func(o *Options) {
		o.APIKey, o.DefaultRegion, o.IntensityOverrides = testAPIKey, "us-east", map[string]float64{"On-Prem": 20}
	})
	bodies := make([]protocol.SpanBody, len(energyChain))
	for i, c := range energyChain {
		bodies[i] = testBody(int64(i) + 1)
		bodies[i].Attributes = map[string]any{"gen_ai.request.model": c.model,
			"gen_ai.usage.input_tokens": c.tokens * 3 / 4, "gen_ai.usage.output_tokens": c.tokens - c.tokens*3/4}
		if c.region != "" {
			bodies[i].Attributes["cloud.region"] = c.region
		}
	}
	if _, err := f.store.Seal(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	return f
}

// documentedTotal is a documented {wh, co2_grams, calls} object.
type documentedTotal struct {
	wh, co2 float64
	calls   int64
}

// wantTotal checks that obj has the documented members wh, co2_grams and calls, as JSON
// numbers (calls a whole one), of the values of want.
func wantTotal(t *testing.T, what string, obj map[string]any, want documentedTotal, whName, co2Name, callsName string) {
	t.Helper()
	wh, okWh := obj[whName].(float64)
	co2, okCO2 := obj[co2Name].(float64)
	calls, okCalls := obj[callsName].(float64)
	if !okWh || !okCO2 || !okCalls || calls != math.Trunc(calls) {
		t.Fatalf("%s: %s, %s and %s must be JSON numbers: %v", what, whName, co2Name, callsName, obj)
	}
	if !near(wh, want.wh) || !near(co2, want.co2) || int64(calls) != want.calls {
		t.Errorf("%s: %s %v, %s %v, %s %v; want %v, %v, %d", what, whName, wh, co2Name, co2, callsName, calls, want.wh, want.co2, want.calls)
	}
}

func TestEnergySummaryDocumented(t *testing.T) {
	f := energyFixture(t)
	resp, body := f.do(http.MethodGet, "/api/energy/summary", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	tests := map[string]struct {
		query string
		// region replaces the intensity of calls naming none; override that of us-east.
		region   string
		noRegion float64
		usEast   float64
	}{
		"the server's options":         {query: "", region: "us-east", noRegion: 380, usEast: 380},
		"a default region asked for":   {query: "?region=eu-west", region: "eu-west", noRegion: 300, usEast: 380},
		"an override":                  {query: "?intensity_overrides=us-east%3D100", region: "us-east", noRegion: 100, usEast: 100},
		"an override by its old name":  {query: "?intensity=US-East%3D100", region: "us-east", noRegion: 100, usEast: 100},
		"the two names, agreeing":      {query: "?intensity=us-east%3D100&intensity_overrides=us-east%3D100", region: "us-east", noRegion: 100, usEast: 100},
		"a custom default region":      {query: "?region=lab&intensity_overrides=lab%3D5", region: "lab", noRegion: 5, usEast: 380},
		"the server's custom override": {query: "?region=on-prem", region: "on-prem", noRegion: 20, usEast: 380},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.do(http.MethodGet, "/api/energy/summary"+tc.query, "", nil, auth...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var got map[string]any
			decode(t, body, &got)
			// Expected: wh = tokens/1000 · rate, co2_grams = wh/1000 · intensity, summed.
			var total documentedTotal
			byModel, byRegion := map[string]documentedTotal{}, map[string]documentedTotal{}
			for _, c := range energyChain {
				region, intensity := c.region, c.intensity
				switch {
				case region == "":
					region, intensity = tc.region, tc.noRegion
				case strings.HasPrefix(region, "us-east"):
					intensity = tc.usEast
				}
				wh := float64(c.tokens) / 1000 * c.rate
				co2 := wh / 1000 * intensity
				for _, m := range []struct {
					totals map[string]documentedTotal
					key    string
				}{{byModel, c.model}, {byRegion, region}} {
					s := m.totals[m.key]
					s.wh, s.co2, s.calls = s.wh+wh, s.co2+co2, s.calls+1
					m.totals[m.key] = s
				}
				total.wh, total.co2, total.calls = total.wh+wh, total.co2+co2, total.calls+1
			}
			wantTotal(t, "summary", got, total, "total_wh", "total_co2_grams", "total_calls")
			for member, want := range map[string]map[string]documentedTotal{"by_model": byModel, "by_region": byRegion} {
				obj, ok := got[member].(map[string]any)
				if !ok || len(obj) != len(want) {
					t.Fatalf("%s: want an object of %d members: %s", member, len(want), body)
				}
				for key, w := range want {
					entry, ok := obj[key].(map[string]any)
					if !ok {
						t.Fatalf("%s[%q]: want an object: %s", member, key, body)
					}
					wantTotal(t, member+"["+key+"]", entry, w, "wh", "co2_grams", "calls")
				}
			}
			// Cairn's additions say which calls fell back.
			var sum analysis.EnergySummary
			decode(t, body, &sum)
			if sum.ModelFallbackCalls != 1 || sum.RegionFallbackCalls != 1 || sum.FallbackCalls != 1 || len(sum.Notes) != 2 ||
				sum.ByModel["my-model"].Known || !sum.ByModel["gpt-4o"].Known || sum.ByRegion["mars"].Known ||
				sum.ByRegion["mars"].IntensitySource != analysis.SourceFallback || sum.ByRegion["on-prem"].IntensitySource != analysis.SourceOverride ||
				sum.TotalTokens != 6500 || sum.DefaultRegion != tc.region {
				t.Errorf("additions: %s", body)
			}
			for _, old := range []string{"wh", "co2_g", "entries", "tokens"} {
				if _, ok := got[old]; ok {
					t.Errorf("the summary still has Cairn's old member %q", old)
				}
			}
		})
	}
	for _, query := range []string{"?intensity=us-east", "?intensity_overrides=us-east%3D", "?intensity=%3D200", "?intensity=us-east%3Dlots",
		"?intensity=us-east%3D200,", "?intensity_overrides=us-east%3D5000", "?intensity=us-east%3D-1", "?intensity=us-east%3DNaN",
		"?intensity=us-east%3D1,US-EAST%3D2", "?intensity=us-east%3D1&intensity_overrides=us-east%3D2",
		"?region=" + strings.Repeat("r", analysis.MaxNameBytes+1)} {
		t.Run(query, func(t *testing.T) {
			resp, body := f.do(http.MethodGet, "/api/energy/summary"+query, "", nil, auth...)
			wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
		})
	}
	var many []string
	for i := range analysis.MaxIntensityOverrides + 1 {
		many = append(many, fmt.Sprintf("r%d=1", i))
	}
	resp, body = f.do(http.MethodGet, "/api/energy/summary?intensity_overrides="+url.QueryEscape(strings.Join(many, ",")), "", nil, auth...)
	wantError(t, resp, body, http.StatusBadRequest, codeBadParameter)
}

func TestEnergyEstimateDocumented(t *testing.T) {
	f := energyFixture(t)
	resp, body := f.postJSON("/api/energy/estimate", `{"model":"gpt-4o","tokens":1000,"region":"eu-west"}`)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)

	tests := map[string]struct {
		body            string
		tokens          int64
		rate, intensity float64
		region          string // the region used
		source          string
		fallbacks       int
		unknownModel    bool
	}{
		"the documented request": {body: `{"model":"gpt-4o","tokens":1000,"region":"eu-west"}`,
			tokens: 1000, rate: 0.005, intensity: 300, region: "eu-west", source: analysis.SourceTable},
		"a small model": {body: `{"model":"gpt-4o-mini","tokens":1000,"region":"eu-north"}`,
			tokens: 1000, rate: 0.001, intensity: 30, region: "eu-north", source: analysis.SourceTable},
		"the server's region": {body: `{"model":"claude-sonnet-4","tokens":2000}`,
			tokens: 2000, rate: 0.003, intensity: 380, region: "us-east", source: analysis.SourceTable},
		"an override region": {body: `{"model":"claude-opus-4-7","tokens":500,"region":"eu-west","intensity_overrides":{"eu-west":120}}`,
			tokens: 500, rate: 0.01, intensity: 120, region: "eu-west", source: analysis.SourceOverride},
		"a custom region of the request": {body: `{"model":"gpt-4o","tokens":1000,"region":"lab","intensity_overrides":{"lab":5}}`,
			tokens: 1000, rate: 0.005, intensity: 5, region: "lab", source: analysis.SourceOverride},
		"a custom region of the server": {body: `{"model":"gpt-4o","tokens":1000,"region":"on-prem"}`,
			tokens: 1000, rate: 0.005, intensity: 20, region: "on-prem", source: analysis.SourceOverride},
		"the request's override wins": {body: `{"model":"gpt-4o","tokens":1000,"region":"on-prem","intensity_overrides":{"ON-PREM":40}}`,
			tokens: 1000, rate: 0.005, intensity: 40, region: "on-prem", source: analysis.SourceOverride},
		"an unknown model": {body: `{"model":"my-model","tokens":1000,"region":"eu-west"}`,
			tokens: 1000, rate: 0.003, intensity: 300, region: "eu-west", source: analysis.SourceTable, fallbacks: 1, unknownModel: true},
		"an unknown region": {body: `{"model":"gpt-4o","tokens":1000,"region":"mars"}`,
			tokens: 1000, rate: 0.005, intensity: 450, region: "world", source: analysis.SourceFallback, fallbacks: 1},
		"both unknown": {body: `{"model":"","tokens":10,"region":"moon"}`,
			tokens: 10, rate: 0.003, intensity: 450, region: "world", source: analysis.SourceFallback, fallbacks: 2, unknownModel: true},
		"Cairn's earlier fields": {body: `{"model":"gpt-4o","input_tokens":700,"output_tokens":300,"region":"eu-west"}`,
			tokens: 1000, rate: 0.005, intensity: 300, region: "eu-west", source: analysis.SourceTable},
		"both ways, agreeing": {body: `{"model":"gpt-4o","tokens":1000,"input_tokens":700,"output_tokens":300,"region":"eu-west"}`,
			tokens: 1000, rate: 0.005, intensity: 300, region: "eu-west", source: analysis.SourceTable},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/energy/estimate", tc.body, auth...)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var got map[string]any
			decode(t, body, &got)
			wh, okWh := got["wh"].(float64)
			co2, okCO2 := got["co2_grams"].(float64)
			if !okWh || !okCO2 {
				t.Fatalf("wh and co2_grams must be JSON numbers: %s", body)
			}
			wantWh := float64(tc.tokens) / 1000 * tc.rate
			if !near(wh, wantWh) || !near(co2, wantWh/1000*tc.intensity) {
				t.Errorf("wh %v, co2_grams %v; want %v, %v", wh, co2, wantWh, wantWh/1000*tc.intensity)
			}
			if _, ok := got["co2_g"]; ok {
				t.Error("the estimate still has Cairn's old member co2_g")
			}
			var est analysis.EnergyEstimate
			decode(t, body, &est)
			if est.Tokens != tc.tokens || est.WhPer1kTokens != tc.rate || est.IntensityGPerKWh != tc.intensity || est.Region != tc.region ||
				est.IntensitySource != tc.source || len(est.Fallbacks) != tc.fallbacks || len(est.Notes) != tc.fallbacks ||
				est.ModelKnown == tc.unknownModel || est.RegionKnown != (tc.source != analysis.SourceFallback) {
				t.Errorf("additions: %s", body)
			}
		})
	}
	for name, tc := range map[string]struct{ body, code string }{
		"not JSON":              {`{"tokens":`, codeBadJSON},
		"an empty body":         {``, codeBadJSON},
		"an unknown member":     {`{"model":"gpt-4o","tokens":1,"watts":2}`, codeBadJSON},
		"the bijotel name":      {`{"model":"gpt-4o","tokens_in":1}`, codeBadJSON},
		"fractional tokens":     {`{"tokens":1.5}`, codeBadJSON},
		"tokens as a string":    {`{"tokens":"10"}`, codeBadJSON},
		"two JSON objects":      {`{"tokens":1}{"tokens":2}`, codeBadJSON},
		"an array of things":    {`[{"tokens":1}]`, codeBadJSON},
		"no tokens":             {`{"model":"gpt-4o"}`, codeBadParameter},
		"negative tokens":       {`{"model":"gpt-4o","tokens":-1,"region":"eu-west"}`, codeBadParameter},
		"negative input tokens": {`{"input_tokens":-1}`, codeBadParameter},
		"both ways, apart":      {`{"tokens":1000,"input_tokens":700,"output_tokens":200}`, codeBadParameter},
		"a bad override":        {`{"tokens":1,"intensity_overrides":{"x":-5}}`, codeBadParameter},
		"a region twice":        {`{"tokens":1,"intensity_overrides":{"lab":5,"LAB":6}}`, codeBadParameter},
		"a long model name":     {`{"tokens":1,"model":"` + strings.Repeat("m", analysis.MaxNameBytes+1) + `"}`, codeBadParameter},
		"too many tokens":       {fmt.Sprintf(`{"tokens":%d}`, int64(analysis.MaxRequestTokens)+1), codeBadParameter},
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

// The server's overrides are checked when it is built.
func TestEnergyServerOverrides(t *testing.T) {
	f := newFixture(t, 0, nil)
	for name, overrides := range map[string]map[string]float64{
		"a negative intensity": {"lab": -1},
		"an unnamed region":    {" ": 5},
		"a region twice":       {"lab": 5, "Lab": 6},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(Options{Store: f.store, IntensityOverrides: overrides}); err == nil || !strings.Contains(err.Error(), "intensity overrides") {
				t.Errorf("New accepted overrides %v: %v", overrides, err)
			}
		})
	}
}

// The OpenAPI document declares the documented members of both answers, with their
// types.
func TestEnergyOpenAPISchemas(t *testing.T) {
	doc := loadDocument(t, newFixture(t, 0, nil))
	for name, members := range map[string]map[string]string{
		"EnergySummary":  {"total_wh": "number", "total_co2_grams": "number", "total_calls": "integer", "by_model": "object", "by_region": "object"},
		"ModelEnergy":    {"wh": "number", "co2_grams": "number", "calls": "integer"},
		"RegionEnergy":   {"wh": "number", "co2_grams": "number", "calls": "integer"},
		"EnergyEstimate": {"wh": "number", "co2_grams": "number"},
		"EnergyRequest":  {"model": "string", "tokens": "integer", "region": "string", "intensity_overrides": "object"},
	} {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		for member, typ := range members {
			p := s.Value.Properties[member]
			if p == nil || p.Value == nil || !p.Value.Type.Is(typ) {
				t.Errorf("%s.%s: want type %s", name, member, typ)
			}
		}
	}
	raw, err := json.Marshal(doc.Components.Schemas["EnergySummary"])
	if err != nil || !strings.Contains(string(raw), "#/components/schemas/ModelEnergy") || !strings.Contains(string(raw), "#/components/schemas/RegionEnergy") {
		t.Errorf("by_model and by_region must map names to ModelEnergy and RegionEnergy: %s", raw)
	}
}
