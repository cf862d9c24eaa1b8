package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Query parameters of GET /api/energy/summary that override grid intensities: the
// documented name, and the name Cairn used first.
const (
	paramIntensityOverrides = "intensity_overrides"
	paramIntensity          = "intensity"
)

// energyRoutes are the routes of GET /api/energy/summary and POST /api/energy/estimate,
// with their schemas.
func (s *Server) energyRoutes(c *components) []route {
	energyReq := c.Ref("EnergyRequest", "Tokens of a model to estimate: the documented {model, tokens, region}. "+
		"input_tokens and output_tokens are still accepted instead of tokens, or beside it when tokens is their sum.", analysis.EnergyRequest{}, fieldDocs{
		"model":               {Description: "the model; matched lowercase, without any provider prefix up to the last /, exactly or by the longest known prefix", Example: "gpt-4o"},
		"tokens":              {Description: "input plus output tokens, 0 to 2^50", Example: 1000},
		"input_tokens":        {Description: "input tokens, 0 to 2^50 (Cairn's earlier request; tokens is the documented member)", Example: 800},
		"output_tokens":       {Description: "output tokens, 0 to 2^50 (Cairn's earlier request)", Example: 200},
		"region":              {Description: "the grid region, matched like model (us-east-1 finds us-east); absent or empty: the server's default region", Example: "eu-west"},
		"intensity_overrides": {Description: "gCO2/kWh by region (0 to 2000), over the server's overrides and the built-in table; names a custom region too", Example: map[string]float64{"eu-west": 120}},
	})
	c.Optional("EnergyRequest", "model", "region")
	estimate := c.Ref("EnergyEstimate", "The estimated energy and CO2 of some tokens: the documented wh and co2_grams, and how they were reached.", analysis.EnergyEstimate{}, fieldDocs{
		"wh":                  {Description: "tokens/1000 · wh_per_1k_tokens", Example: 0.005},
		"co2_grams":           {Description: "wh/1000 · intensity_g_per_kwh, grams", Example: 0.0015},
		"model":               {Description: "the model asked for", Example: "gpt-4o-2024-08-06"},
		"matched_model":       {Description: "the rate table's key used; empty when the default rate was", Example: "gpt-4o"},
		"model_known":         {Description: "false when the default rate was used"},
		"region":              {Description: "the region whose intensity was used: the one asked for (or the server's default), or world when it is unknown", Example: "eu-west"},
		"requested_region":    {Description: "the region asked for, or the server's default when the request names none", Example: "eu-west"},
		"matched_region":      {Description: "the key of the overrides or of the intensity table used", Example: "eu-west"},
		"region_known":        {Description: "false when the region is unknown and world's intensity was used"},
		"tokens":              {Description: "the tokens estimated", Example: 1000},
		"wh_per_1k_tokens":    {Description: "the energy rate used, Wh per 1000 tokens", Example: 0.005},
		"rate_source":         {Description: "where the rate came from", Enum: []string{analysis.SourceTable, analysis.SourceFallback}},
		"intensity_g_per_kwh": {Description: "the grid intensity used, gCO2/kWh", Example: 300},
		"intensity_source":    {Description: "where the intensity came from", Enum: []string{analysis.SourceOverride, analysis.SourceTable, analysis.SourceFallback}},
		"fallbacks":           {Description: "the defaults used: model, region; empty when none"},
		"notes":               {Description: "the fallbacks, in words"},
	})
	totalDocs := func(what string, extra fieldDocs) fieldDocs {
		docs := fieldDocs{
			"wh":        {Description: "estimated energy of the " + what + "'s calls, Wh", Example: 0.0045},
			"co2_grams": {Description: "their estimated CO2, grams", Example: 0.00171},
			"calls":     {Description: "calls with token counts (the energy log's rows)", Example: 6},
			"tokens":    {Description: "their input plus output tokens", Example: 900},
			"known":     {Description: "false when the " + what + " is unknown and its calls used the default"},
		}
		for k, v := range extra {
			docs[k] = v
		}
		return docs
	}
	c.Ref("ModelEnergy", "The energy of one model's calls.", analysis.ModelEnergy{}, totalDocs("model", fieldDocs{
		"wh_per_1k_tokens": {Description: "the rate used, Wh per 1000 tokens", Example: 0.005},
	}))
	c.Ref("RegionEnergy", "The energy of one region's calls.", analysis.RegionEnergy{}, totalDocs("region", fieldDocs{
		"intensity_g_per_kwh": {Description: "the intensity used, gCO2/kWh", Example: 380},
		"intensity_source":    {Description: "where the intensity came from", Enum: []string{analysis.SourceOverride, analysis.SourceTable, analysis.SourceFallback}},
	}))
	summary := c.Ref("EnergySummary", "The estimated energy and CO2 of every logged call: the documented totals and breakdowns, and Cairn's account of the fallbacks.", analysis.EnergySummary{}, fieldDocs{
		"total_wh":              {Description: "estimated energy of all calls with token counts, Wh", Example: 0.0078},
		"total_co2_grams":       {Description: "their estimated CO2, grams, with the intensity of each call's region (or the default region) after the overrides", Example: 0.002964},
		"total_calls":           {Description: "calls with token counts (the energy log's rows)", Example: 12},
		"by_model":              {Description: "totals by the model the calls name; the key \"\" stands for calls naming none"},
		"by_region":             {Description: "totals by the region the calls name, or the default region; the key \"\" stands for calls naming none when no default region is set"},
		"total_tokens":          {Description: "their input plus output tokens", Example: 1960},
		"fallback_calls":        {Description: "calls that used the default rate or world's intensity, or both"},
		"model_fallback_calls":  {Description: "calls that used the default rate"},
		"region_fallback_calls": {Description: "calls that used world's intensity"},
		"default_region":        {Description: "the region of calls whose span names none", Example: analysis.DefaultRegion},
		"notes":                 {Description: "the fallbacks, in words"},
	})
	return []route{
		{method: http.MethodGet, path: "/api/energy/summary", handler: http.HandlerFunc(s.energySummary), op: operation{
			id: "energySummary", summary: "Energy and CO2 of the chain's calls",
			description: "Totals of the energy log (one row per entry with token counts, written when sealed), by model and by region, with the current tables: " +
				"Wh = tokens/1000 · rate[model]; CO2 g = Wh/1000 · intensity[region]. Unknown models and regions use the documented defaults and are counted and noted.",
			params: []param{
				{name: "region", in: "query", description: "region of the calls whose span names none (cloud.region); absent: the server's default region, empty: none", schema: &schema{Type: "string"}},
				{name: paramIntensityOverrides, in: "query", description: "grid intensity overrides, gCO2/kWh by region, over the server's: region=value pairs separated by commas, e.g. us-east=200,eu-west=100; may be repeated",
					schema: &schema{Type: "string", Example: "us-east=200,eu-west=100"}},
				{name: paramIntensity, in: "query", description: "the earlier name of intensity_overrides, still accepted; the two are read as one list", schema: &schema{Type: "string"}},
			},
			responses: []response{jsonOK("The totals.", summary)}}},
		{method: http.MethodPost, path: "/api/energy/estimate", handler: http.HandlerFunc(s.estimateEnergy), op: operation{
			id: "estimateEnergy", summary: "Estimate the energy and CO2 of some tokens",
			description: "Wh = tokens/1000 · rate[model] and CO2 g = Wh/1000 · intensity[region], for a request naming no region in the server's default region. " +
				"An unknown model uses the default rate and an unknown region world's intensity, and the answer says so.",
			body:      jsonBody("The model, tokens and region.", true, energyReq),
			responses: []response{jsonOK("The estimate.", estimate)}}},
	}
}

func (s *Server) energySummary(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opts := analysis.EnergySummaryOptions{DefaultRegion: s.defaultRegion}
	if q.Has("region") {
		opts.DefaultRegion = q.Get("region")
	}
	var err error
	if len(opts.DefaultRegion) > analysis.MaxNameBytes {
		err = badRequest(codeBadParameter, "region is %d bytes, at most %d allowed", len(opts.DefaultRegion), analysis.MaxNameBytes)
	} else {
		opts.IntensityOverrides, err = parseIntensities(append(q[paramIntensityOverrides], q[paramIntensity]...))
	}
	if err != nil {
		s.writeRequestError(w, r, "energy summary", err)
		return
	}
	opts.IntensityOverrides = analysis.MergeOverrides(s.intensityOverrides, opts.IntensityOverrides)
	sum, err := s.store.EnergySummary(r.Context(), opts)
	if err != nil {
		s.analysisError(w, r, "energy summary", err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

func (s *Server) estimateEnergy(w http.ResponseWriter, r *http.Request) {
	// decodeJSON and Validate accept what analysis.ParseEnergyRequest does; decodeJSON
	// also caps the body and checks its content type.
	var req analysis.EnergyRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		s.writeRequestError(w, r, "energy estimate", err)
		return
	}
	if err := req.Validate(); err != nil { // before the merge, which hides a region given twice
		s.analysisError(w, r, "energy estimate", err)
		return
	}
	if strings.TrimSpace(req.Region) == "" {
		req.Region = s.defaultRegion
	}
	req.IntensityOverrides = analysis.MergeOverrides(s.intensityOverrides, req.IntensityOverrides)
	est, err := analysis.EstimateEnergy(req)
	if err != nil {
		s.analysisError(w, r, "energy estimate", err)
		return
	}
	writeJSON(w, http.StatusOK, est)
}

// parseIntensities reads the intensity override query parameters: each a comma-separated
// list of region=gCO2/kWh pairs. A region given twice (ignoring case) with two values is
// refused; the values are range-checked by analysis.ValidateOverrides.
func parseIntensities(values []string) (map[string]float64, error) {
	overrides := map[string]float64{}
	seen := map[string]float64{}
	for _, value := range values {
		for pair := range strings.SplitSeq(value, ",") {
			region, text, ok := strings.Cut(pair, "=")
			region, text = strings.TrimSpace(region), strings.TrimSpace(text)
			if !ok || region == "" || text == "" {
				return nil, badRequest(codeBadParameter, "%s %s: want region=gCO2/kWh pairs separated by commas, e.g. us-east=200,eu-west=100", paramIntensityOverrides, protocol.Quote(pair))
			}
			g, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil, badRequest(codeBadParameter, "%s %s=%s: not a number of gCO2/kWh", paramIntensityOverrides, protocol.Excerpt(region), protocol.Quote(text))
			}
			key := strings.ToLower(region)
			if prev, ok := seen[key]; ok && prev != g {
				return nil, badRequest(codeBadParameter, "%s: region %s is given twice, as %v and %v", paramIntensityOverrides, protocol.Quote(region), prev, g)
			}
			if _, ok := seen[key]; !ok && len(seen) == analysis.MaxIntensityOverrides {
				return nil, badRequest(codeBadParameter, "%s: more than %d regions", paramIntensityOverrides, analysis.MaxIntensityOverrides)
			}
			seen[key], overrides[key] = g, g
		}
	}
	if err := analysis.ValidateOverrides(overrides); err != nil {
		return nil, badRequest(codeBadParameter, "%s: %v", paramIntensityOverrides, err)
	}
	return overrides, nil
}
