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
		{"gpt-4o", "gpt-4o", 0.6},
		{"gpt-4o-2024-08-06", "gpt-4o", 0.6},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 0.024}, // the longest prefix, not gpt-4o
		{"GPT-4-0613", "gpt-4", 2.4},
		{"gpt-4-turbo-2024-04-09", "gpt-4-turbo", 1.2},
		{"gpt-3.5-turbo-0125", "gpt-3.5-turbo", 0.06},
		{"openai/gpt-4o", "gpt-4o", 0.6},
		{"claude-3-opus-20240229", "claude-3-opus", 3.0},
		{"claude-3-5-sonnet-20241022", "claude-3-5-sonnet", 0.6},
		{"claude-3-haiku-20240307", "claude-3-haiku", 0.05},
		{"meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama-3-70b", 1.1},
		{"llama-3-8b-instruct", "llama-3-8b", 0.12},
		{"mistral-large-2407", "mistral-large", 1.9},
		{"mistral-7b-instruct-v0.3", "mistral", 0.11},
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

func TestDefaultTables(t *testing.T) {
	want := map[string]float64{"us-east": 380, "us-west": 250, "eu-west": 300, "eu-central": 350, "eu-north": 30}
	if !reflect.DeepEqual(DefaultGridIntensity, want) {
		t.Errorf("DefaultGridIntensity = %v", DefaultGridIntensity)
	}
	for _, family := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4", "gpt-3.5-turbo", "claude-3-opus", "claude-3-sonnet",
		"claude-3-haiku", "claude-3-5-sonnet", "llama-3-8b", "llama-3-70b", "mistral"} {
		if r, ok := DefaultEnergyRates[family]; !ok || r <= 0 {
			t.Errorf("no rate for %s", family)
		}
	}
	for k := range DefaultEnergyRates {
		if k != strings.ToLower(k) {
			t.Errorf("key %q is not lowercase: it could never match", k)
		}
	}
}

func TestGridIntensity(t *testing.T) {
	over := map[string]float64{"US-EAST-1": 50, "ap-south": 700}
	for _, c := range []struct {
		region    string
		overrides map[string]float64
		want      float64
		matched   string
	}{
		{"us-east", nil, 380, "us-east"},
		{"us-east-1", nil, 380, "us-east"},
		{"EU-North-1", nil, 30, "eu-north"},
		{"us-east-1", over, 50, "us-east-1"}, // an exact override beats the table's prefix
		{"us-east-2", over, 380, "us-east"},
		{"ap-south-1", over, 700, "ap-south"},
		{"ap-south-1", nil, FallbackGridIntensity, ""},
		{"", over, FallbackGridIntensity, ""},
	} {
		got, matched, known := GridIntensity(c.region, c.overrides)
		if got != c.want || matched != c.matched || known != (c.matched != "") {
			t.Errorf("GridIntensity(%q, %v) = %v, %q, %v; want %v, %q", c.region, c.overrides, got, matched, known, c.want, c.matched)
		}
	}
}

func TestEstimateEnergyHandComputed(t *testing.T) {
	cases := map[string]struct {
		req  EnergyRequest
		want EnergyEstimate
	}{
		// 1,500 + 500 = 2,000 tokens of gpt-4o: 2 · 0.6 = 1.2 Wh; in us-east,
		// 1.2/1000 · 380 = 0.456 g.
		"known model and region": {
			EnergyRequest{Model: "gpt-4o-2024-08-06", InputTokens: ptr(1500), OutputTokens: ptr(500), Region: "us-east-1"},
			EnergyEstimate{Model: "gpt-4o-2024-08-06", MatchedModel: "gpt-4o", ModelKnown: true, Region: "us-east-1",
				MatchedRegion: "us-east", RegionKnown: true, Tokens: 2000, WhPer1kTokens: 0.6, IntensityGPerKWh: 380,
				IntensitySource: SourceTable, Wh: 1.2, CO2g: 0.456, Fallbacks: []string{}, Notes: []string{}}},
		// 10,000 tokens of Claude 3 Haiku: 10 · 0.05 = 0.5 Wh; eu-north: 0.5/1000 · 30 = 0.015 g.
		"tokens given as a total": {
			EnergyRequest{Model: "claude-3-haiku-20240307", Tokens: ptr(10_000), Region: "eu-north"},
			EnergyEstimate{Model: "claude-3-haiku-20240307", MatchedModel: "claude-3-haiku", ModelKnown: true, Region: "eu-north",
				MatchedRegion: "eu-north", RegionKnown: true, Tokens: 10_000, WhPer1kTokens: 0.05, IntensityGPerKWh: 30,
				IntensitySource: SourceTable, Wh: 0.5, CO2g: 0.015, Fallbacks: []string{}, Notes: []string{}}},
		// 3,000 tokens of an unknown model: 3 · 1.0 = 3 Wh; unknown region:
		// 3/1000 · 480 = 1.44 g.
		"both fall back": {
			EnergyRequest{Model: "my-model", OutputTokens: ptr(3000), Region: "mars-1"},
			EnergyEstimate{Model: "my-model", Region: "mars-1", Tokens: 3000, WhPer1kTokens: FallbackEnergyRate,
				IntensityGPerKWh: FallbackGridIntensity, IntensitySource: SourceFallback, Wh: 3, CO2g: 1.44,
				Fallbacks: []string{FallbackModel, FallbackRegion}}},
		// 500 tokens of gpt-4: 0.5 · 2.4 = 1.2 Wh; us-west overridden to 100 g/kWh:
		// 1.2/1000 · 100 = 0.12 g.
		"override": {
			EnergyRequest{Model: "gpt-4", InputTokens: ptr(500), Region: "us-west-2", IntensityOverrides: map[string]float64{"Us-West": 100}},
			EnergyEstimate{Model: "gpt-4", MatchedModel: "gpt-4", ModelKnown: true, Region: "us-west-2", MatchedRegion: "us-west",
				RegionKnown: true, Tokens: 500, WhPer1kTokens: 2.4, IntensityGPerKWh: 100, IntensitySource: SourceOverride,
				Wh: 1.2, CO2g: 0.12, Fallbacks: []string{}, Notes: []string{}}},
		// No region: the fallback intensity, said so.
		"no region": {
			EnergyRequest{Model: "gpt-4o", Tokens: ptr(1000)},
			EnergyEstimate{Model: "gpt-4o", MatchedModel: "gpt-4o", ModelKnown: true, Tokens: 1000, WhPer1kTokens: 0.6,
				IntensityGPerKWh: 480, IntensitySource: SourceFallback, Wh: 0.6, CO2g: 0.288, Fallbacks: []string{FallbackRegion}}},
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
			if !near(got.Wh, c.want.Wh) || !near(got.CO2g, c.want.CO2g) {
				t.Errorf("wh %v co2 %v, want %v %v", got.Wh, got.CO2g, c.want.Wh, c.want.CO2g)
			}
			got.Wh, got.CO2g, got.Notes = c.want.Wh, c.want.CO2g, c.want.Notes
			if c.want.Notes == nil {
				c.want.Notes, got.Notes = nil, nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	est, err := EstimateEnergy(EnergyRequest{Model: "my-model", Tokens: ptr(1)})
	if err != nil || !slices.Equal(est.Notes, []string{
		`model "my-model" is not in the energy rate table: used the fallback rate of 1 Wh per 1000 tokens`,
		"no region given: used the fallback intensity of 480 gCO2/kWh (world average)"}) {
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
		"both ways":          `{"tokens":3,"input_tokens":1}`,
		"negative":           `{"output_tokens":-1}`,
		"fraction":           `{"tokens":1.5}`,
		"string count":       `{"tokens":"12"}`,
		"too many":           `{"tokens":1125899906842625}`,
		"negative intensity": `{"tokens":1,"intensity_overrides":{"us-east":-1}}`,
		"huge intensity":     `{"tokens":1,"intensity_overrides":{"us-east":1e9}}`,
		"unnamed region":     `{"tokens":1,"intensity_overrides":{" ":100}}`,
		"long model":         `{"tokens":1,"model":"` + strings.Repeat("m", MaxNameBytes+1) + `"}`,
	} {
		if _, err := ParseEnergyRequest([]byte(body)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: got %v, want an ErrInvalidInput", name, err)
		}
	}
}

func TestEnergyOf(t *testing.T) {
	// 800 + 200 tokens of gpt-4o in eu-central: 0.6 Wh, 0.6/1000 · 350 = 0.21 g.
	f := SpanFacts{InputTokens: 800, OutputTokens: 200, HasInputTokens: true, HasOutputTokens: true, Model: "gpt-4o", Region: "eu-central-1"}
	rec, ok := EnergyOf(&f)
	if !ok || rec.Tokens != 1000 || !near(rec.Wh, 0.6) || !near(rec.CO2g, 0.21) || rec.Model != "gpt-4o" || rec.Region != "eu-central-1" {
		t.Errorf("%+v, %v", rec, ok)
	}
	// No region: the fallback intensity, 0.6/1000 · 480 = 0.288 g.
	f.Region = ""
	if rec, _ := EnergyOf(&f); !near(rec.CO2g, 0.288) {
		t.Errorf("%+v", rec)
	}
	if _, ok := EnergyOf(&SpanFacts{Model: "gpt-4o"}); ok {
		t.Error("a span without token counts has an energy record")
	}
}

func TestSummarizeEnergy(t *testing.T) {
	groups := []EnergyGroup{
		{Model: "", Region: "", Entries: 1, Tokens: 1000, Wh: 1.0},                  // fallback rate, no region
		{Model: "gpt-4o", Region: "", Entries: 2, Tokens: 2000, Wh: 1.2},            // 2 · 0.6
		{Model: "gpt-4o", Region: "us-east-1", Entries: 3, Tokens: 5000, Wh: 3.0},   // 5 · 0.6
		{Model: "mystery", Region: "eu-north-1", Entries: 4, Tokens: 1000, Wh: 1.0}, // fallback rate
		{Model: "gpt-4o", Region: "antarctica", Entries: 5, Tokens: 10000, Wh: 6.0}, // unknown region
	}
	// Default region eu-west (300), us-east overridden to 100:
	// "" and gpt-4o with no region: (1.0 + 1.2)/1000 · 300 = 0.66 g; us-east-1:
	// 3.0/1000 · 100 = 0.3 g; eu-north-1: 1.0/1000 · 30 = 0.03 g; antarctica:
	// 6.0/1000 · 480 = 2.88 g. Total 3.87 g.
	sum := SummarizeEnergy(groups, EnergySummaryOptions{DefaultRegion: "eu-west", IntensityOverrides: map[string]float64{"us-east": 100}})
	if sum.Entries != 15 || sum.Tokens != 19000 || !near(sum.Wh, 12.2) || !near(sum.CO2g, 3.87) {
		t.Errorf("totals %+v", sum)
	}
	if sum.ModelFallbackEntries != 5 || sum.RegionFallbackEntries != 5 || sum.FallbackEntries != 10 || len(sum.Notes) != 2 {
		t.Errorf("fallbacks %d %d %d %q", sum.ModelFallbackEntries, sum.RegionFallbackEntries, sum.FallbackEntries, sum.Notes)
	}
	wantModels := []EnergyTotal{
		{Name: "", Known: false, Entries: 1, Tokens: 1000, Wh: 1.0, CO2g: 0.3},
		{Name: "gpt-4o", Known: true, Entries: 10, Tokens: 17000, Wh: 10.2, CO2g: 0.36 + 0.3 + 2.88},
		{Name: "mystery", Known: false, Entries: 4, Tokens: 1000, Wh: 1.0, CO2g: 0.03},
	}
	wantRegions := []EnergyTotal{
		{Name: "antarctica", Known: false, Entries: 5, Tokens: 10000, Wh: 6.0, CO2g: 2.88},
		{Name: "eu-north-1", Known: true, Entries: 4, Tokens: 1000, Wh: 1.0, CO2g: 0.03},
		{Name: "eu-west", Known: true, Entries: 3, Tokens: 3000, Wh: 2.2, CO2g: 0.66},
		{Name: "us-east-1", Known: true, Entries: 3, Tokens: 5000, Wh: 3.0, CO2g: 0.3},
	}
	for _, c := range []struct {
		got, want []EnergyTotal
	}{{sum.ByModel, wantModels}, {sum.ByRegion, wantRegions}} {
		if len(c.got) != len(c.want) {
			t.Fatalf("got %+v\nwant %+v", c.got, c.want)
		}
		for i := range c.want {
			g, w := c.got[i], c.want[i]
			if g.Name != w.Name || g.Known != w.Known || g.Entries != w.Entries || g.Tokens != w.Tokens || !near(g.Wh, w.Wh) || !near(g.CO2g, w.CO2g) {
				t.Errorf("got %+v, want %+v", g, w)
			}
		}
	}
	empty := SummarizeEnergy(nil, EnergySummaryOptions{})
	if empty.Entries != 0 || empty.ByModel == nil || empty.ByRegion == nil || empty.Notes == nil {
		t.Errorf("empty summary %+v: lists must be empty, not null", empty)
	}
}
