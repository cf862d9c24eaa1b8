package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// EnergyGroup is the energy log's entries of one model in one region, summed (the rows
// the store groups for SummarizeEnergy).
type EnergyGroup struct {
	// Model and Region are as logged; either may be empty.
	Model, Region string
	// Entries is how many entries; Tokens and Wh are their sums.
	Entries, Tokens int64
	Wh              float64
}

// EnergySummaryOptions choose how a summary attributes CO2 (the query of
// GET /api/energy/summary).
type EnergySummaryOptions struct {
	// DefaultRegion is the region of entries whose span names none.
	DefaultRegion string `json:"default_region"`
	// IntensityOverrides are gCO2/kWh by region, over DefaultGridIntensity.
	IntensityOverrides map[string]float64 `json:"intensity_overrides,omitempty"`
}

// EnergyTotal is the sum over the entries of one model or one region.
type EnergyTotal struct {
	// Name is the model or region ("" when the spans named none and, for a region, no
	// default region is set). Known is false when it fell back to the default rate or
	// intensity.
	Name    string  `json:"name"`
	Known   bool    `json:"known"`
	Entries int64   `json:"entries"`
	Tokens  int64   `json:"tokens"`
	Wh      float64 `json:"wh"`
	CO2g    float64 `json:"co2_g"`
}

// EnergySummary is the energy and CO2 of every entry in the energy log.
type EnergySummary struct {
	// Entries is how many entries (those with token counts); Tokens, Wh and CO2g their
	// sums.
	Entries int64   `json:"entries"`
	Tokens  int64   `json:"tokens"`
	Wh      float64 `json:"wh"`
	CO2g    float64 `json:"co2_g"`
	// ByModel and ByRegion break the totals down, each sorted by name.
	ByModel  []EnergyTotal `json:"by_model"`
	ByRegion []EnergyTotal `json:"by_region"`
	// FallbackEntries is how many entries used a fallback rate or intensity (or both);
	// ModelFallbackEntries and RegionFallbackEntries count each kind.
	FallbackEntries       int64 `json:"fallback_entries"`
	ModelFallbackEntries  int64 `json:"model_fallback_entries"`
	RegionFallbackEntries int64 `json:"region_fallback_entries"`
	// DefaultRegion is the option used for entries that name no region.
	DefaultRegion string `json:"default_region"`
	// Notes says which fallbacks were used, in words; empty, not null, when none was.
	Notes []string `json:"notes"`
}

// SummarizeEnergy totals groups. Each group's Wh is taken as logged (computed with
// DefaultEnergyRates when it was sealed); its CO2 is recomputed from that Wh with the
// intensity of its region, or of opts.DefaultRegion when it names none, after
// opts.IntensityOverrides, so that the summary follows the caller's options. CO2 is
// linear in Wh, so with no options this equals the sum of the logged co2_g. The options
// must be valid (ValidateOverrides).
func SummarizeEnergy(groups []EnergyGroup, opts EnergySummaryOptions) EnergySummary {
	sum := EnergySummary{ByModel: []EnergyTotal{}, ByRegion: []EnergyTotal{}, DefaultRegion: opts.DefaultRegion, Notes: []string{}}
	byModel := map[string]*EnergyTotal{}
	byRegion := map[string]*EnergyTotal{}
	add := func(totals map[string]*EnergyTotal, name string, known bool, g *EnergyGroup, co2 float64) {
		t := totals[name]
		if t == nil {
			t = &EnergyTotal{Name: name, Known: known}
			totals[name] = t
		}
		t.Entries += g.Entries
		t.Tokens += g.Tokens
		t.Wh += g.Wh
		t.CO2g += co2
	}
	for i := range groups {
		g := &groups[i]
		region := g.Region
		if region == "" {
			region = opts.DefaultRegion
		}
		_, _, modelKnown := ModelRate(g.Model)
		intensity, _, regionKnown := GridIntensity(region, opts.IntensityOverrides)
		co2 := co2Grams(g.Wh, intensity)
		add(byModel, g.Model, modelKnown, g, co2)
		add(byRegion, region, regionKnown, g, co2)
		sum.Entries += g.Entries
		sum.Tokens += g.Tokens
		sum.Wh += g.Wh
		sum.CO2g += co2
		if !modelKnown {
			sum.ModelFallbackEntries += g.Entries
		}
		if !regionKnown {
			sum.RegionFallbackEntries += g.Entries
		}
		if !modelKnown || !regionKnown {
			sum.FallbackEntries += g.Entries
		}
	}
	sum.ByModel = sortedTotals(byModel)
	sum.ByRegion = sortedTotals(byRegion)
	if sum.ModelFallbackEntries > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d entries have no model or one not in the energy rate table: used the fallback rate of %s Wh per 1000 tokens",
			sum.ModelFallbackEntries, strconv.FormatFloat(FallbackEnergyRate, 'f', -1, 64)))
	}
	if sum.RegionFallbackEntries > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d entries have no region or one not in the grid intensity table: used the fallback intensity of %s gCO2/kWh (world average)",
			sum.RegionFallbackEntries, strconv.FormatFloat(FallbackGridIntensity, 'f', -1, 64)))
	}
	return sum
}

func sortedTotals(totals map[string]*EnergyTotal) []EnergyTotal {
	out := make([]EnergyTotal, 0, len(totals))
	for _, t := range totals {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b EnergyTotal) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
