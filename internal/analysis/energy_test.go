package analysis

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func ptr(n int64) *int64 { return &n }

func TestModelRateMatching(t *testing.T) {
	for _, c := range []struct {
		model, matched string
		rate           float64
	}{
		{"gpt-4o", "gpt-4o", 0.005},
		{"gpt-4o-2024-08-06", "gpt-4o", 0.005},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 0.001}, // the longest prefix, not gpt-4o
		{"GPT-4-Turbo-2024-04-09", "gpt-4-turbo", 0.007},
		{"openai/gpt-4o", "gpt-4o", 0.005},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001", 0.001},
		{"claude-sonnet-4", "claude-sonnet-4", 0.003},
		{"claude-sonnet-4-5", "claude-sonnet-4", 0.003},
		{"anthropic/claude-opus-4-1", "claude-opus-4", 0.01},
		{"gpt-4-0613", "", FallbackEnergyRate}, // gpt-4 is not in the documented table
		{"my-own-model", "", FallbackEnergyRate},
		{"", "", FallbackEnergyRate},
		{"gpt", "", FallbackEnergyRate}, // a key may begin the name, not the other way round
	} {
		rate, matched, known := ModelRate(c.model)
		if rate != c.rate || matched != c.matched || known != (c.matched != "") {
			t.Errorf("ModelRate(%q) = %v, %q, %v; want %v, %q", c.model, rate, matched, known, c.rate, c.matched)
		}
	}
}

// TestDefaultTables pins the documented tables (DEFAULT_ENERGY_RATES,
// DEFAULT_GRID_INTENSITY and their defaults) value by value.
func TestDefaultTables(t *testing.T) {
	rates := map[string]float64{
		"claude-haiku-4-5": 0.001, "claude-haiku-4-5-20251001": 0.001, "claude-sonnet-4": 0.003,
		"claude-sonnet-4-20250514": 0.003, "claude-opus-4": 0.01, "claude-opus-4-5": 0.01, "claude-opus-4-6": 0.01,
		"claude-opus-4-7": 0.01, "gpt-4o-mini": 0.001, "gpt-4o": 0.005, "gpt-4-turbo": 0.007,
	}
	if !reflect.DeepEqual(DefaultEnergyRates, rates) || FallbackEnergyRate != 0.003 {
		t.Errorf("DefaultEnergyRates = %v, FallbackEnergyRate %v", DefaultEnergyRates, FallbackEnergyRate)
	}
	grid := map[string]float64{"us-east": 380, "us-west": 250, "eu-west": 300, "eu-north": 30, "eu-central": 350,
		"asia-pacific": 500, "world": 450}
	if !reflect.DeepEqual(DefaultGridIntensity, grid) || DefaultRegion != "us-east" || WorldRegion != "world" || FallbackGridIntensity != 450 {
		t.Errorf("DefaultGridIntensity = %v, DefaultRegion %q, WorldRegion %q", DefaultGridIntensity, DefaultRegion, WorldRegion)
	}
}

func TestGridIntensity(t *testing.T) {
	over := map[string]float64{"US-EAST-1": 50, "ap-south": 700}
	for _, c := range []struct {
		region    string
		overrides map[string]float64
		want      float64
		matched   string
		known     bool
	}{
		{"us-east", nil, 380, "us-east", true},
		{"us-east-1", nil, 380, "us-east", true},
		{"EU-North-1", nil, 30, "eu-north", true},
		{"asia-pacific", nil, 500, "asia-pacific", true},
		{"us-east-1", over, 50, "us-east-1", true}, // an exact override beats the table's prefix
		{"us-east-2", over, 380, "us-east", true},
		{"ap-south-1", over, 700, "ap-south", true},
		{"ap-south-1", nil, 450, "world", false},
		{"", over, 450, "world", false},
		{"mars", map[string]float64{"World": 100}, 100, "world", false}, // the world override moves the fallback
	} {
		got, matched, known := GridIntensity(c.region, c.overrides)
		if got != c.want || matched != c.matched || known != c.known {
			t.Errorf("GridIntensity(%q, %v) = %v, %q, %v; want %v, %q, %v", c.region, c.overrides, got, matched, known, c.want, c.matched, c.known)
		}
	}
}

func TestEstimateEnergyHandComputed(t *testing.T) {
	none := []string{}
	cases := map[string]struct {
		req  EnergyRequest
		want EnergyEstimate
	}{
		// 1,500 + 500 = 2,000 tokens of gpt-4o: 2 · 0.005 = 0.01 Wh; in us-east,
		// 0.01/1000 · 380 = 0.0038 g.
		"known model and region": {
			EnergyRequest{Model: "gpt-4o-2024-08-06", InputTokens: ptr(1500), OutputTokens: ptr(500), Region: "us-east-1"},
			EnergyEstimate{Model: "gpt-4o-2024-08-06", MatchedModel: "gpt-4o", ModelKnown: true, Region: "us-east-1", RequestedRegion: "us-east-1",
				MatchedRegion: "us-east", RegionKnown: true, Tokens: 2000, WhPer1kTokens: 0.005, RateSource: SourceTable, IntensityGPerKWh: 380,
				IntensitySource: SourceTable, Wh: 0.01, CO2Grams: 0.0038, Fallbacks: none, Notes: none}},
		// 10,000 tokens of Claude Haiku 4.5: 10 · 0.001 = 0.01 Wh; eu-north: 0.01/1000 · 30 = 0.0003 g.
		"tokens given as a total": {
			EnergyRequest{Model: "claude-haiku-4-5-20251001", Tokens: ptr(10_000), Region: "eu-north"},
			EnergyEstimate{Model: "claude-haiku-4-5-20251001", MatchedModel: "claude-haiku-4-5-20251001", ModelKnown: true, Region: "eu-north",
				RequestedRegion: "eu-north", MatchedRegion: "eu-north", RegionKnown: true, Tokens: 10_000, WhPer1kTokens: 0.001,
				RateSource: SourceTable, IntensityGPerKWh: 30, IntensitySource: SourceTable, Wh: 0.01, CO2Grams: 0.0003, Fallbacks: none, Notes: none}},
		// The total and its parts, agreeing: 1,000 tokens of Claude Sonnet 4, 0.003 Wh;
		// eu-west: 0.003/1000 · 300 = 0.0009 g.
		"tokens and their parts": {
			EnergyRequest{Model: "claude-sonnet-4", Tokens: ptr(1000), InputTokens: ptr(600), OutputTokens: ptr(400), Region: "eu-west"},
			EnergyEstimate{Model: "claude-sonnet-4", MatchedModel: "claude-sonnet-4", ModelKnown: true, Region: "eu-west",
				RequestedRegion: "eu-west", MatchedRegion: "eu-west", RegionKnown: true, Tokens: 1000, WhPer1kTokens: 0.003,
				RateSource: SourceTable, IntensityGPerKWh: 300, IntensitySource: SourceTable, Wh: 0.003, CO2Grams: 0.0009, Fallbacks: none, Notes: none}},
		// 3,000 tokens of an unknown model: 3 · 0.003 = 0.009 Wh; an unknown region is
		// the world's: 0.009/1000 · 450 = 0.00405 g.
		"both fall back": {
			EnergyRequest{Model: "my-model", OutputTokens: ptr(3000), Region: "mars-1"},
			EnergyEstimate{Model: "my-model", Region: "world", RequestedRegion: "mars-1", MatchedRegion: "world", Tokens: 3000,
				WhPer1kTokens: FallbackEnergyRate, RateSource: SourceFallback, IntensityGPerKWh: 450, IntensitySource: SourceFallback,
				Wh: 0.009, CO2Grams: 0.00405, Fallbacks: []string{FallbackModel, FallbackRegion}}},
		// 500 tokens of Claude Opus 4.7: 0.5 · 0.01 = 0.005 Wh; us-west overridden to
		// 100 g/kWh: 0.005/1000 · 100 = 0.0005 g.
		"override": {
			EnergyRequest{Model: "claude-opus-4-7", InputTokens: ptr(500), Region: "us-west-2", IntensityOverrides: map[string]float64{"Us-West": 100}},
			EnergyEstimate{Model: "claude-opus-4-7", MatchedModel: "claude-opus-4-7", ModelKnown: true, Region: "us-west-2", RequestedRegion: "us-west-2",
				MatchedRegion: "us-west", RegionKnown: true, Tokens: 500, WhPer1kTokens: 0.01, RateSource: SourceTable, IntensityGPerKWh: 100,
				IntensitySource: SourceOverride, Wh: 0.005, CO2Grams: 0.0005, Fallbacks: none, Notes: none}},
		// A custom region, known only through its override: 0.005 Wh at 20 g/kWh.
		"custom region": {
			EnergyRequest{Model: "gpt-4o", Tokens: ptr(1000), Region: "on-prem", IntensityOverrides: map[string]float64{"on-prem": 20}},
			EnergyEstimate{Model: "gpt-4o", MatchedModel: "gpt-4o", ModelKnown: true, Region: "on-prem", RequestedRegion: "on-prem",
				MatchedRegion: "on-prem", RegionKnown: true, Tokens: 1000, WhPer1kTokens: 0.005, RateSource: SourceTable, IntensityGPerKWh: 20,
				IntensitySource: SourceOverride, Wh: 0.005, CO2Grams: 0.0001, Fallbacks: none, Notes: none}},
		// No region: the world's intensity, said so: 0.005/1000 · 450 = 0.00225 g.
		"no region": {
			EnergyRequest{Model: "gpt-4o", Tokens: ptr(1000)},
			EnergyEstimate{Model: "gpt-4o", MatchedModel: "gpt-4o", ModelKnown: true, Region: "world", MatchedRegion: "world", Tokens: 1000,
				WhPer1kTokens: 0.005, RateSource: SourceTable, IntensityGPerKWh: 450, IntensitySource: SourceFallback, Wh: 0.005, CO2Grams: 0.00225,
				Fallbacks: []string{FallbackRegion}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EstimateEnergy(c.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Notes) != len(got.Fallbacks) {
				t.Errorf("notes %q for fallbacks %q", got.Notes, got.Fallbacks)
			}
			if !near(got.Wh, c.want.Wh) || !near(got.CO2Grams, c.want.CO2Grams) {
				t.Errorf("wh %v co2 %v, want %v %v", got.Wh, got.CO2Grams, c.want.Wh, c.want.CO2Grams)
			}
			got.Wh, got.CO2Grams = c.want.Wh, c.want.CO2Grams
			if c.want.Notes == nil {
				got.Notes = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	est, err := EstimateEnergy(EnergyRequest{Model: "my-model", Tokens: ptr(1)})
	if err != nil || !slices.Equal(est.Notes, []string{
		`model "my-model" is not in the energy rate table: used the default rate of 0.003 Wh per 1000 tokens`,
		"no region given: used region world, 450 gCO2/kWh"}) {
		t.Errorf("notes %q, %v", est.Notes, err)
	}
}

func TestParseEnergyRequest(t *testing.T) {
	req, err := ParseEnergyRequest([]byte(`{"model":"gpt-4o","input_tokens":10,"output_tokens":5,"region":"eu-west",
		"intensity_overrides":{"eu-west":120.5}}`))
	if err != nil || req.Model != "gpt-4o" || *req.InputTokens != 10 || *req.OutputTokens != 5 || req.IntensityOverrides["eu-west"] != 120.5 {
		t.Fatalf("%+v, %v", req, err)
	}
	for name, body := range map[string]string{
		"not JSON":           `{"model":`,
		"not an object":      `[1]`,
		"unknown member":     `{"model":"gpt-4o","tokens":1,"temperature":0}`,
		"trailing data":      `{"tokens":1} {}`,
		"no tokens":          `{"model":"gpt-4o"}`,
		"contradicting ways": `{"tokens":3,"input_tokens":1}`,
		"contradicting sum":  `{"tokens":3,"input_tokens":1,"output_tokens":1}`,
		"negative":           `{"output_tokens":-1}`,
		"fraction":           `{"tokens":1.5}`,
		"string count":       `{"tokens":"12"}`,
		"too many":           `{"tokens":1125899906842625}`,
		"negative intensity": `{"tokens":1,"intensity_overrides":{"us-east":-1}}`,
		"huge intensity":     `{"tokens":1,"intensity_overrides":{"us-east":1e9}}`,
		"unnamed region":     `{"tokens":1,"intensity_overrides":{" ":100}}`,
		"a region twice":     `{"tokens":1,"intensity_overrides":{"eu-west":100,"EU-West":120}}`,
		"long model":         `{"tokens":1,"model":"` + strings.Repeat("m", MaxNameBytes+1) + `"}`,
	} {
		if _, err := ParseEnergyRequest([]byte(body)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: got %v, want an ErrInvalidInput", name, err)
		}
	}
}

func TestEnergyOf(t *testing.T) {
	// 800 + 200 tokens of gpt-4o in eu-central: 0.005 Wh, 0.005/1000 · 350 = 0.00175 g.
	f := SpanFacts{InputTokens: 800, OutputTokens: 200, HasInputTokens: true, HasOutputTokens: true, Model: "gpt-4o", Region: "eu-central-1"}
	rec, ok := EnergyOf(&f)
	if !ok || rec.Tokens != 1000 || !near(rec.Wh, 0.005) || !near(rec.CO2g, 0.00175) || rec.Model != "gpt-4o" || rec.Region != "eu-central-1" {
		t.Errorf("%+v, %v", rec, ok)
	}
	// No region: the world's intensity, 0.005/1000 · 450 = 0.00225 g.
	f.Region = ""
	if rec, _ := EnergyOf(&f); !near(rec.CO2g, 0.00225) {
		t.Errorf("%+v", rec)
	}
	if _, ok := EnergyOf(&SpanFacts{Model: "gpt-4o"}); ok {
		t.Error("a span without token counts has an energy record")
	}
}

func TestSummarizeEnergy(t *testing.T) {
	groups := []EnergyGroup{
		{Model: "", Region: "", Calls: 1, Tokens: 1000},                  // default rate 0.003: 0.003 Wh, default region
		{Model: "gpt-4o", Region: "", Calls: 2, Tokens: 2000},            // 2 · 0.005 = 0.01 Wh
		{Model: "gpt-4o", Region: "us-east-1", Calls: 3, Tokens: 5000},   // 0.025 Wh
		{Model: "mystery", Region: "eu-north-1", Calls: 4, Tokens: 1000}, // default rate: 0.003 Wh
		{Model: "gpt-4o", Region: "antarctica", Calls: 5, Tokens: 10000}, // 0.05 Wh, unknown region
	}
	// Default region eu-west (300), us-east overridden to 100: no region:
	// (0.003 + 0.01)/1000 · 300 = 0.0039 g; us-east-1: 0.025/1000 · 100 = 0.0025 g;
	// eu-north-1: 0.003/1000 · 30 = 0.00009 g; antarctica, the world's:
	// 0.05/1000 · 450 = 0.0225 g. Total 0.091 Wh, 0.02899 g.
	sum := SummarizeEnergy(groups, EnergySummaryOptions{DefaultRegion: "eu-west", IntensityOverrides: map[string]float64{"us-east": 100}})
	if sum.TotalCalls != 15 || sum.TotalTokens != 19000 || !near(sum.TotalWh, 0.091) || !near(sum.TotalCO2Grams, 0.02899) {
		t.Errorf("totals %+v", sum)
	}
	if sum.ModelFallbackCalls != 5 || sum.RegionFallbackCalls != 5 || sum.FallbackCalls != 10 || len(sum.Notes) != 2 {
		t.Errorf("fallbacks %d %d %d %q", sum.ModelFallbackCalls, sum.RegionFallbackCalls, sum.FallbackCalls, sum.Notes)
	}
	wantModels := map[string]ModelEnergy{
		"":        {EnergyTotal{Calls: 1, Tokens: 1000, Wh: 0.003, CO2Grams: 0.0009}, 0.003},
		"gpt-4o":  {EnergyTotal{Known: true, Calls: 10, Tokens: 17000, Wh: 0.085, CO2Grams: 0.003 + 0.0025 + 0.0225}, 0.005},
		"mystery": {EnergyTotal{Calls: 4, Tokens: 1000, Wh: 0.003, CO2Grams: 0.00009}, 0.003},
	}
	wantRegions := map[string]RegionEnergy{
		"antarctica": {EnergyTotal{Calls: 5, Tokens: 10000, Wh: 0.05, CO2Grams: 0.0225}, 450, SourceFallback},
		"eu-north-1": {EnergyTotal{Known: true, Calls: 4, Tokens: 1000, Wh: 0.003, CO2Grams: 0.00009}, 30, SourceTable},
		"eu-west":    {EnergyTotal{Known: true, Calls: 3, Tokens: 3000, Wh: 0.013, CO2Grams: 0.0039}, 300, SourceTable},
		"us-east-1":  {EnergyTotal{Known: true, Calls: 3, Tokens: 5000, Wh: 0.025, CO2Grams: 0.0025}, 100, SourceOverride},
	}
	sameTotal := func(g, w EnergyTotal) bool {
		return g.Known == w.Known && g.Calls == w.Calls && g.Tokens == w.Tokens && near(g.Wh, w.Wh) && near(g.CO2Grams, w.CO2Grams)
	}
	if len(sum.ByModel) != len(wantModels) || len(sum.ByRegion) != len(wantRegions) {
		t.Fatalf("by model %+v\nby region %+v", sum.ByModel, sum.ByRegion)
	}
	for name, w := range wantModels {
		if g, ok := sum.ByModel[name]; !ok || !sameTotal(g.EnergyTotal, w.EnergyTotal) || g.WhPer1kTokens != w.WhPer1kTokens {
			t.Errorf("model %q: got %+v, want %+v", name, g, w)
		}
	}
	for name, w := range wantRegions {
		if g, ok := sum.ByRegion[name]; !ok || !sameTotal(g.EnergyTotal, w.EnergyTotal) || g.IntensityGPerKWh != w.IntensityGPerKWh ||
			g.IntensitySource != w.IntensitySource {
			t.Errorf("region %q: got %+v, want %+v", name, g, w)
		}
	}
	empty := SummarizeEnergy(nil, EnergySummaryOptions{})
	if empty.TotalCalls != 0 || empty.ByModel == nil || empty.ByRegion == nil || empty.Notes == nil {
		t.Errorf("empty summary %+v: maps and lists must be empty, not null", empty)
	}
}
