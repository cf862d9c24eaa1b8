package analysis

import (
	"math"
	"strings"
)

// DefaultEnergyRates are estimated watt-hours per 1,000 tokens (input plus output) of a
// model's inference, by model name (lowercase).
//
// They are estimates, good to an order of magnitude at best. Providers publish no
// per-token energy for hosted models, and the real figure depends on the hardware, the
// batch size, the share of input to output tokens (input tokens cost far less) and the
// data centre's overhead (PUE). Each rate is derived from one of two anchors:
//
//   - Hosted models: Epoch AI's estimate (Feb 2025, "How much energy does ChatGPT
//     use?") of about 0.3 Wh for a typical GPT-4o reply of about 500 tokens, i.e. 0.6 Wh
//     per 1,000 tokens. Other hosted models are scaled from it by the ratio of their
//     output-token list price at launch to GPT-4o's ($15 per million output tokens at its
//     launch), taking price as a proxy for the compute a token costs.
//   - Open-weight models: the measurements of Samsi et al. (2023, "From Words to Watts:
//     Benchmarking the Energy Costs of Large Language Model Inference") of roughly 3–4 J
//     per generated token for LLaMA-65B on A100 GPUs, i.e. about 1.0 Wh per 1,000
//     tokens at 3.6 J. Other open-weight models are scaled from it linearly by their
//     parameter count, as inference compute per token is about proportional to it.
//
// Models are matched as ModelRate describes.
var DefaultEnergyRates = map[string]float64{
	// Epoch AI's anchor: 0.3 Wh per ~500-token reply.
	"gpt-4o": 0.6,
	// $0.60 / $15 per million output tokens × 0.6.
	"gpt-4o-mini": 0.024,
	// $60 / $15 × 0.6.
	"gpt-4": 2.4,
	// gpt-4-turbo: $30 / $15 × 0.6.
	"gpt-4-turbo": 1.2,
	// gpt-3.5-turbo-0125: $1.50 / $15 × 0.6.
	"gpt-3.5-turbo": 0.06,
	// Claude 3 Opus: $75 / $15 × 0.6.
	"claude-3-opus": 3.0,
	// Claude 3 Sonnet: $15 / $15 × 0.6.
	"claude-3-sonnet": 0.6,
	// Claude 3 Haiku: $1.25 / $15 × 0.6.
	"claude-3-haiku": 0.05,
	// Claude 3.5 Sonnet: $15 / $15 × 0.6; both spellings of the name.
	"claude-3-5-sonnet": 0.6,
	"claude-3.5-sonnet": 0.6,
	// Llama 3 70B: Samsi et al.'s LLaMA-65B figure, 3.6 J per token, scaled by 70/65
	// and rounded.
	"llama-3-70b":      1.1,
	"llama3-70b":       1.1,
	"meta-llama-3-70b": 1.1,
	// Llama 3 8B: the 65B figure × 8/65.
	"llama-3-8b":      0.12,
	"llama3-8b":       0.12,
	"meta-llama-3-8b": 0.12,
	// Mistral 7B, and any other "mistral" name not listed: the 65B figure × 7.3/65.
	"mistral": 0.11,
	// Mistral Small (22B): the 65B figure × 22/65.
	"mistral-small": 0.34,
	// Mistral Large 2 (123B): the 65B figure × 123/65.
	"mistral-large": 1.9,
	// Mixtral 8x7B: 12.9B parameters active per token, × 12.9/65.
	"mixtral-8x7b": 0.2,
}

// FallbackEnergyRate (Wh per 1,000 tokens) is used for a model DefaultEnergyRates does
// not match: a round figure between the small and the large models above, of the order
// of the two anchors.
const FallbackEnergyRate = 1.0

// DefaultGridIntensity is the carbon intensity of electricity, in grams of CO2 per kWh,
// by region. These are the rounded annual averages the project's specification (issue
// 7) fixes for five broad regions; they are of the order that public datasets such as
// Ember's and Electricity Maps' report for those grids (US East and Central Europe
// with much fossil generation, the US West and Western Europe less, the Nordics mostly
// hydro and nuclear), and they are not live data. Regions are matched as GridIntensity
// describes, so "us-east-1" and "eu-north-1" find their entries.
var DefaultGridIntensity = map[string]float64{
	"us-east":    380,
	"us-west":    250,
	"eu-west":    300,
	"eu-central": 350,
	"eu-north":   30,
}

// FallbackGridIntensity (gCO2/kWh) is used for a region DefaultGridIntensity does not
// match, and when no region is known: about the world average carbon intensity of
// electricity generation in 2023 (Ember, Global Electricity Review 2024: 480 g/kWh).
const FallbackGridIntensity = 480.0

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
// both). With no match, or an empty region, it returns FallbackGridIntensity, "" and
// false.
func GridIntensity(region string, overrides map[string]float64) (intensity float64, matched string, known bool) {
	name := strings.ToLower(strings.TrimSpace(region))
	if name == "" {
		return FallbackGridIntensity, "", false
	}
	table := DefaultGridIntensity
	if len(overrides) > 0 {
		table = make(map[string]float64, len(DefaultGridIntensity)+len(overrides))
		for k, v := range DefaultGridIntensity {
			table[k] = v
		}
		for k, v := range overrides {
			table[strings.ToLower(strings.TrimSpace(k))] = v
		}
	}
	if key, ok := longestPrefix(name, table); ok {
		return table[key], key, true
	}
	return FallbackGridIntensity, "", false
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
