package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/analysis"
)

func (s *Server) analysisRoutes(c *components) group {
	energyReq := c.Ref("EnergyRequest", "Tokens of a model to estimate. Give tokens, or input_tokens and/or output_tokens.", analysis.EnergyRequest{}, fieldDocs{
		"model":               {Description: "the model; matched lowercase, without any provider prefix up to the last /, exactly or by the longest known prefix", Example: "gpt-4o"},
		"input_tokens":        {Description: "input tokens, 0 to 2^50", Example: 800},
		"output_tokens":       {Description: "output tokens, 0 to 2^50", Example: 200},
		"tokens":              {Description: "input plus output tokens, instead of the two", Example: 1000},
		"region":              {Description: "the grid region, matched like model (us-east-1 finds us-east); absent or empty: the server's default region", Example: "eu-west"},
		"intensity_overrides": {Description: "gCO2/kWh by region (0 to 2000), over the built-in table", Example: map[string]float64{"eu-west": 120}},
	})
	c.Optional("EnergyRequest", "model", "region")
	estimate := c.Ref("EnergyEstimate", "The estimated energy and CO2 of some tokens.", analysis.EnergyEstimate{}, fieldDocs{
		"model":               {Description: "the model asked for", Example: "gpt-4o-2024-08-06"},
		"matched_model":       {Description: "the rate table's key used; empty when the fallback rate was", Example: "gpt-4o"},
		"model_known":         {Description: "false when the fallback rate was used"},
		"region":              {Description: "the region used: the request's, else the server's default", Example: "eu-west"},
		"matched_region":      {Description: "the key of the overrides or of the intensity table used; empty when the fallback intensity was", Example: "eu-west"},
		"region_known":        {Description: "false when the fallback intensity was used"},
		"tokens":              {Description: "the tokens estimated", Example: 1000},
		"wh_per_1k_tokens":    {Description: "the energy rate used, Wh per 1000 tokens", Example: 0.6},
		"intensity_g_per_kwh": {Description: "the grid intensity used, gCO2/kWh", Example: 300},
		"intensity_source":    {Description: "where the intensity came from", Enum: []string{analysis.SourceOverride, analysis.SourceTable, analysis.SourceFallback}},
		"wh":                  {Description: "tokens/1000 · wh_per_1k_tokens", Example: 0.6},
		"co2_g":               {Description: "wh/1000 · intensity_g_per_kwh, grams", Example: 0.18},
		"fallbacks":           {Description: "the defaults used: model, region; empty when none"},
		"notes":               {Description: "the fallbacks, in words"},
	})
	c.Ref("EnergyTotal", "The energy of the entries of one model or one region.", analysis.EnergyTotal{}, fieldDocs{
		"name":    {Description: "the model or region; empty when the spans named none (and, for a region, no default is set)", Example: "gpt-4o"},
		"known":   {Description: "false when its entries used the fallback rate or intensity"},
		"entries": {Description: "entries with token counts", Example: 1200},
		"tokens":  {Description: "their input plus output tokens", Example: 480000},
		"wh":      {Description: "their estimated energy, Wh", Example: 288},
		"co2_g":   {Description: "their estimated CO2, grams", Example: 109.4},
	})
	summary := c.Ref("EnergySummary", "The estimated energy and CO2 of every logged entry.", analysis.EnergySummary{}, fieldDocs{
		"entries":                 {Description: "entries with token counts (the energy log's rows)", Example: 1200},
		"tokens":                  {Description: "their input plus output tokens", Example: 480000},
		"wh":                      {Description: "their estimated energy, Wh (as logged when sealed)", Example: 288},
		"co2_g":                   {Description: "their estimated CO2, grams, with the intensity of each entry's region (or the default region) after the overrides", Example: 109.4},
		"by_model":                {Description: "totals by model, sorted by name"},
		"by_region":               {Description: "totals by region, sorted by name"},
		"fallback_entries":        {Description: "entries that used a fallback rate or intensity, or both"},
		"model_fallback_entries":  {Description: "entries that used the fallback rate"},
		"region_fallback_entries": {Description: "entries that used the fallback intensity"},
		"default_region":          {Description: "the region of entries whose span names none", Example: "us-east"},
		"notes":                   {Description: "the fallbacks, in words"},
	})
	return group{name: "analysis", description: "The energy and CO2 of the calls.", routes: []route{
		{method: http.MethodGet, path: "/api/energy/summary", handler: http.HandlerFunc(s.energySummary), op: operation{
			id: "energySummary", summary: "Energy and CO2 of the chain's calls",
			description: "Totals of the energy log (one row per entry with token counts, written when sealed), by model and by region. " +
				"Wh = tokens/1000 · rate[model]; CO2 g = Wh/1000 · intensity[region]. Unknown models and regions use the documented fallbacks and are counted and noted.",
			params: []param{
				{name: "region", in: "query", description: "region of the entries whose span names none (cloud.region); absent: the server's default region, empty: none", schema: &schema{Type: "string"}},
				{name: "intensity", in: "query", description: "grid intensity overrides, gCO2/kWh by region: region=value pairs separated by commas, e.g. us-east=200,eu-west=100; may be repeated",
					schema: &schema{Type: "string", Example: "us-east=200,eu-west=100"}},
			},
			responses: []response{jsonOK("The totals.", summary)}}},
		{method: http.MethodPost, path: "/api/energy/estimate", handler: http.HandlerFunc(s.estimateEnergy), op: operation{
			id: "estimateEnergy", summary: "Estimate the energy and CO2 of some tokens",
			description: "Wh = tokens/1000 · rate[model] and CO2 g = Wh/1000 · intensity[region], for a request naming no region in the server's default region. " +
				"An unknown model or region uses the fallback rate or intensity, and the answer says so.",
			body:      jsonBody("The model, tokens and region.", true, energyReq),
			responses: []response{jsonOK("The estimate.", estimate)}}},
	}}
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
		opts.IntensityOverrides, err = parseIntensities(q["intensity"])
	}
	if err != nil {
		s.writeRequestError(w, r, "energy summary", err)
		return
	}
	sum, err := s.store.EnergySummary(r.Context(), opts)
	if err != nil {
		s.analysisError(w, r, "energy summary", err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

func (s *Server) estimateEnergy(w http.ResponseWriter, r *http.Request) {
	// decodeJSON and EstimateEnergy's own Validate accept what analysis.ParseEnergyRequest
	// does; decodeJSON also caps the body and checks its content type.
	var req analysis.EnergyRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		s.writeRequestError(w, r, "energy estimate", err)
		return
	}
	if strings.TrimSpace(req.Region) == "" {
		req.Region = s.defaultRegion
	}
	est, err := analysis.EstimateEnergy(req)
	if err != nil {
		s.analysisError(w, r, "energy estimate", err)
		return
	}
	writeJSON(w, http.StatusOK, est)
}

// analysisError answers an error of internal/analysis: 400 for bad input
// (analysis.ErrInvalidInput), else 500.
func (s *Server) analysisError(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, analysis.ErrInvalidInput) {
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
		return
	}
	s.internalError(w, r, what, err)
}

// parseIntensities reads the intensity query parameters: each a comma-separated list of
// region=gCO2/kWh pairs. A region given twice (ignoring case) is refused; the values are
// range-checked later, by analysis.ValidateOverrides.
func parseIntensities(values []string) (map[string]float64, error) {
	overrides := map[string]float64{}
	seen := map[string]bool{}
	for _, value := range values {
		for pair := range strings.SplitSeq(value, ",") {
			region, text, ok := strings.Cut(pair, "=")
			region, text = strings.TrimSpace(region), strings.TrimSpace(text)
			if !ok || region == "" || text == "" {
				return nil, badRequest(codeBadParameter, "intensity %q: want region=gCO2/kWh pairs separated by commas, e.g. us-east=200,eu-west=100", pair)
			}
			g, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil, badRequest(codeBadParameter, "intensity %s=%q: not a number of gCO2/kWh", region, text)
			}
			key := strings.ToLower(region)
			if seen[key] {
				return nil, badRequest(codeBadParameter, "intensity: region %q is given twice", region)
			}
			if len(seen) == analysis.MaxIntensityOverrides {
				return nil, badRequest(codeBadParameter, "intensity: more than %d regions", analysis.MaxIntensityOverrides)
			}
			seen[key], overrides[region] = true, g
		}
	}
	return overrides, nil
}
