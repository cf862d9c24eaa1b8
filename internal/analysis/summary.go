package analysis

import (
	"fmt"
	"strconv"
)

// EnergyGroup is the energy log's entries of one model in one region, summed (the rows
// the store groups for SummarizeEnergy).
type EnergyGroup struct {
	// Model and Region are as logged; either may be empty.
	Model, Region string
	// Calls is how many entries; Tokens the sum of their tokens.
	Calls, Tokens int64
}

// EnergySummaryOptions choose how a summary attributes CO2 (the query of
// GET /api/energy/summary).
type EnergySummaryOptions struct {
	// DefaultRegion is the region of entries whose span names none.
	DefaultRegion string `json:"default_region"`
	// IntensityOverrides are gCO2/kWh by region, over DefaultGridIntensity.
	IntensityOverrides map[string]float64 `json:"intensity_overrides,omitempty"`
}

// EnergyTotal is the sum over the entries of one model or one region: the documented
// members wh, co2_grams and calls, and Cairn's tokens and known.
type EnergyTotal struct {
	Wh       float64 `json:"wh"`
	CO2Grams float64 `json:"co2_grams"`
	Calls    int64   `json:"calls"`
	Tokens   int64   `json:"tokens"`
	// Known is false when the model or region fell back to the default rate or
	// intensity.
	Known bool `json:"known"`
}

// ModelEnergy is the total of one model's entries and the rate they were estimated at.
type ModelEnergy struct {
	EnergyTotal
	WhPer1kTokens float64 `json:"wh_per_1k_tokens"`
}

// RegionEnergy is the total of one region's entries and the intensity used for them.
type RegionEnergy struct {
	EnergyTotal
	IntensityGPerKWh float64 `json:"intensity_g_per_kwh"`
	// IntensitySource is one of the Source constants.
	IntensitySource string `json:"intensity_source"`
}

// EnergySummary is the energy and CO2 of every entry in the energy log. TotalWh,
// TotalCO2Grams, TotalCalls, ByModel and ByRegion are the documented members; the others
// are Cairn's additions.
type EnergySummary struct {
	// TotalCalls is how many entries (those with token counts); TotalWh and
	// TotalCO2Grams their sums.
	TotalWh       float64 `json:"total_wh"`
	TotalCO2Grams float64 `json:"total_co2_grams"`
	TotalCalls    int64   `json:"total_calls"`
	// ByModel and ByRegion break the totals down by the model and the region the entries
	// name (the default region for those naming none); "" stands for entries naming
	// none (and, for a region, no default region set).
	ByModel  map[string]ModelEnergy  `json:"by_model"`
	ByRegion map[string]RegionEnergy `json:"by_region"`
	// TotalTokens is the entries' input plus output tokens.
	TotalTokens int64 `json:"total_tokens"`
	// FallbackCalls is how many entries used a fallback rate or intensity (or both);
	// ModelFallbackCalls and RegionFallbackCalls count each kind.
	FallbackCalls       int64 `json:"fallback_calls"`
	ModelFallbackCalls  int64 `json:"model_fallback_calls"`
	RegionFallbackCalls int64 `json:"region_fallback_calls"`
	// DefaultRegion is the option used for entries that name no region.
	DefaultRegion string `json:"default_region"`
	// Notes says which fallbacks were used, in words; empty, not null, when none was.
	Notes []string `json:"notes"`
}

// SummarizeEnergy totals groups with the current tables: each group's Wh is
// Tokens/1000 · the rate of its model (ModelRate), and its CO2 Wh/1000 · the intensity
// of its region, or of opts.DefaultRegion when it names none, after
// opts.IntensityOverrides (GridIntensity). Recomputing from the logged tokens, rather
// than summing the Wh logged when each entry was sealed, makes the summary follow the
// tables and the caller's options, and agree with EstimateEnergy. The options must be
// valid (ValidateOverrides).
func SummarizeEnergy(groups []EnergyGroup, opts EnergySummaryOptions) EnergySummary {
	sum := EnergySummary{ByModel: map[string]ModelEnergy{}, ByRegion: map[string]RegionEnergy{},
		DefaultRegion: opts.DefaultRegion, Notes: []string{}}
	for i := range groups {
		g := &groups[i]
		region := g.Region
		if region == "" {
			region = opts.DefaultRegion
		}
		rate, _, modelKnown := ModelRate(g.Model)
		intensity, matched, regionKnown := GridIntensity(region, opts.IntensityOverrides)
		wh := energyWh(g.Tokens, rate)
		co2 := co2Grams(wh, intensity)

		m := sum.ByModel[g.Model]
		m.add(g, wh, co2, modelKnown)
		m.WhPer1kTokens = rate
		sum.ByModel[g.Model] = m
		r := sum.ByRegion[region]
		r.add(g, wh, co2, regionKnown)
		r.IntensityGPerKWh = intensity
		r.IntensitySource = intensitySource(matched, regionKnown, opts.IntensityOverrides)
		sum.ByRegion[region] = r

		sum.TotalCalls += g.Calls
		sum.TotalTokens += g.Tokens
		sum.TotalWh += wh
		sum.TotalCO2Grams += co2
		if !modelKnown {
			sum.ModelFallbackCalls += g.Calls
		}
		if !regionKnown {
			sum.RegionFallbackCalls += g.Calls
		}
		if !modelKnown || !regionKnown {
			sum.FallbackCalls += g.Calls
		}
	}
	if sum.ModelFallbackCalls > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d calls have no model or one not in the energy rate table: used the default rate of %s Wh per 1000 tokens",
			sum.ModelFallbackCalls, strconv.FormatFloat(FallbackEnergyRate, 'f', -1, 64)))
	}
	if sum.RegionFallbackCalls > 0 {
		g, _, _ := GridIntensity(WorldRegion, opts.IntensityOverrides)
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d calls have no region or one not in the grid intensity table: used region %s, %s gCO2/kWh",
			sum.RegionFallbackCalls, WorldRegion, strconv.FormatFloat(g, 'f', -1, 64)))
	}
	return sum
}

// add adds group g, of energy wh and CO2 co2, to t.
func (t *EnergyTotal) add(g *EnergyGroup, wh, co2 float64, known bool) {
	t.Calls += g.Calls
	t.Tokens += g.Tokens
	t.Wh += wh
	t.CO2Grams += co2
	t.Known = known
}
