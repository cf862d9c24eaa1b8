package analysis

import (
	"math"
	"strings"
)

// DefaultEnergyRates are watt-hours per 1,000 tokens (input plus output) of a model's
// inference, by model name (lowercase).
//
// The numbers are the chain service's documented table (DEFAULT_ENERGY_RATES of the
// product whose REST API Cairn's chain service reproduces), kept exactly so that
// figures agree with that documentation and with the clients and dashboards written
// against it: small models (Claude Haiku 4.5, GPT-4o mini) at 0.001, Claude Sonnet 4 at
// 0.003, GPT-4o at 0.005, GPT-4 Turbo at 0.007 and the Claude Opus 4 family at 0.01.
// They are a convention that ranks models by the compute a token costs, not a
// measurement. Providers publish no per-token energy for hosted models, and published
// estimates run far higher: Epoch AI (Feb 2025, "How much energy does ChatGPT use?")
// puts a typical GPT-4o reply of about 500 tokens at about 0.3 Wh, some 0.6 Wh per
// 1,000 tokens, two orders of magnitude above this table. Read the results as
// comparable between models and over time, not as a metered figure; an operator who
// needs other numbers gets them from their provider.
//
// Models are matched as ModelRate describes; an unknown model uses FallbackEnergyRate.
var DefaultEnergyRates = map[string]float64{
	"claude-haiku-4-5":          0.001,
	"claude-haiku-4-5-20251001": 0.001,
	"claude-sonnet-4":           0.003,
	"claude-sonnet-4-20250514":  0.003,
	"claude-opus-4":             0.01,
	"claude-opus-4-5":           0.01,
	"claude-opus-4-6":           0.01,
	"claude-opus-4-7":           0.01,
	"gpt-4o-mini":               0.001,
	"gpt-4o":                    0.005,
	"gpt-4-turbo":               0.007,
}

// FallbackEnergyRate (Wh per 1,000 tokens) is used for a model DefaultEnergyRates does
// not match: the documented default (DEFAULT_RATE_FALLBACK), a mid-size model's rate.
const FallbackEnergyRate = 0.003

// DefaultGridIntensity is the carbon intensity of electricity, in grams of CO2 per kWh,
// by region: the documented table (DEFAULT_GRID_INTENSITY) of rounded annual averages.
// They are of the order that public datasets such as Ember's and Electricity Maps'
// report for those grids (the US East, Central Europe and Asia-Pacific with much fossil
// generation, the US West and Western Europe less, the Nordics mostly hydro and
// nuclear; "world" the global average), and they are not live data. Regions are matched
// as GridIntensity describes, so "us-east-1" and "eu-north-1" find their entries; an
// unknown region uses WorldRegion's entry.
var DefaultGridIntensity = map[string]float64{
	"us-east":      380,
	"us-west":      250,
	"eu-west":      300,
	"eu-north":     30,
	"eu-central":   350,
	"asia-pacific": 500,
	WorldRegion:    FallbackGridIntensity,
}

// DefaultRegion is the documented region of calls and requests that name none.
const DefaultRegion = "us-east"

// WorldRegion is the region whose intensity is used for a region that neither the
// overrides nor DefaultGridIntensity match, or when no region is known; an answer then
// names it as the region used. An override of WorldRegion changes the fallback too.
const WorldRegion = "world"

// FallbackGridIntensity (gCO2/kWh) is DefaultGridIntensity's WorldRegion entry: the
// documented world average.
const FallbackGridIntensity = 450.0

// MaxGridIntensity bounds an intensity override: no grid emits more than about 1,100 g
// per kWh (coal), so a larger value is a mistake.
const MaxGridIntensity = 2000.0

// ModelRate returns the energy rate of model from DefaultEnergyRates and the key it
// matched. The name is lowercased and anything up to its last "/" dropped
// (so "openai/gpt-4o" reads as "gpt-4o"); then an exact key wins, else the longest key
// that begins the name, so "gpt-4o-2024-08-06" matches "gpt-4o" and
// "gpt-4o-mini-2024-07-18" matches "gpt-4o-mini". With no match it returns
// FallbackEnergyRate, "" and false.
func ModelRate(model string) (rate float64, matched string, known bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if key, ok := longestPrefix(name, DefaultEnergyRates); ok {
		return DefaultEnergyRates[key], key, true
	}
	return FallbackEnergyRate, "", false
}

// GridIntensity returns the carbon intensity of region, with overrides (caller-supplied,
// keys compared in lowercase) taking precedence over DefaultGridIntensity, and the key
// it matched. The region is lowercased; an exact key wins, else the longest key that
// begins it, so "us-east-1" matches "us-east" (an override for "us-east-1" wins over
// both). With no match, or an empty region, it returns WorldRegion's intensity (after
// the overrides), WorldRegion and false.
func GridIntensity(region string, overrides map[string]float64) (intensity float64, matched string, known bool) {
	table := DefaultGridIntensity
	if len(overrides) > 0 {
		table = MergeOverrides(DefaultGridIntensity, overrides)
	}
	if key, ok := longestPrefix(strings.ToLower(strings.TrimSpace(region)), table); ok {
		return table[key], key, true
	}
	return table[WorldRegion], WorldRegion, false
}

// MergeOverrides returns base with over's entries added or replacing base's; keys are
// trimmed and lowercased. Neither map is changed.
func MergeOverrides(base, over map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(base)+len(over))
	for _, m := range []map[string]float64{base, over} {
		for k, v := range m {
			out[strings.ToLower(strings.TrimSpace(k))] = v
		}
	}
	return out
}

// longestPrefix returns name when it is a key of table, else the longest key that is a
// prefix of name.
func longestPrefix(name string, table map[string]float64) (string, bool) {
	if name == "" {
		return "", false
	}
	if _, ok := table[name]; ok {
		return name, true
	}
	best := ""
	for key := range table {
		if len(key) > len(best) && strings.HasPrefix(name, key) {
			best = key
		}
	}
	return best, best != ""
}

// EnergyRecord is the energy of one sealed entry, as the store's energy_log keeps it.
type EnergyRecord struct {
	// Model and Region are as the span names them (SpanFacts); either may be empty.
	Model, Region string
	// Tokens is input plus output tokens.
	Tokens int64
	// Wh and CO2g are computed with the default tables; CO2g with FallbackGridIntensity
	// when the span names no region or an unknown one.
	Wh, CO2g float64
}

// EnergyOf returns the energy record of a span, and false when it carries no token
// count.
func EnergyOf(f *SpanFacts) (EnergyRecord, bool) {
	tokens, ok := f.Tokens()
	if !ok {
		return EnergyRecord{}, false
	}
	rate, _, _ := ModelRate(f.Model)
	intensity, _, _ := GridIntensity(f.Region, nil)
	wh := energyWh(tokens, rate)
	return EnergyRecord{Model: f.Model, Region: f.Region, Tokens: tokens, Wh: wh, CO2g: co2Grams(wh, intensity)}, true
}

// energyWh is tokens/1000 · rate.
func energyWh(tokens int64, rate float64) float64 { return float64(tokens) / 1000 * rate }

// co2Grams is wh/1000 · intensity (g/kWh).
func co2Grams(wh, intensity float64) float64 { return wh / 1000 * intensity }

// validIntensity reports whether v can be a grid intensity in g/kWh.
func validIntensity(v float64) bool {
	return !math.IsNaN(v) && v >= 0 && v <= MaxGridIntensity
}
