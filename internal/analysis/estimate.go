package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on an energy request.
const (
	// MaxRequestTokens bounds each token count of a request.
	MaxRequestTokens = 1 << 50
	// MaxNameBytes bounds a model or region name.
	MaxNameBytes = 256
	// MaxIntensityOverrides bounds how many regions a request may override.
	MaxIntensityOverrides = 256
)

// Fallback kinds listed in EnergyEstimate.Fallbacks.
const (
	FallbackModel  = "model"
	FallbackRegion = "region"
)

// Where an intensity came from (EnergyEstimate.IntensitySource).
const (
	SourceOverride = "override"
	SourceTable    = "table"
	SourceFallback = "fallback"
)

// EnergyRequest asks for the energy and CO2 of some tokens of a model (the body of
// POST /api/energy/estimate). The documented request is {model, tokens, region}; Cairn's
// earlier input_tokens and output_tokens are still accepted, instead of tokens or beside
// it when tokens is their sum.
type EnergyRequest struct {
	Model string `json:"model"`
	// Tokens is input plus output tokens.
	Tokens       *int64 `json:"tokens,omitempty"`
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	// Region is matched as GridIntensity describes; empty uses WorldRegion's
	// intensity (a server fills in its configured default region before estimating).
	Region string `json:"region"`
	// IntensityOverrides are gCO2/kWh by region, taking precedence over
	// DefaultGridIntensity.
	IntensityOverrides map[string]float64 `json:"intensity_overrides,omitempty"`
}

// ParseEnergyRequest decodes a request from JSON: one object, no unknown members, token
// counts as JSON integers. It checks the request as Validate does. Errors wrap
// ErrInvalidInput.
func ParseEnergyRequest(data []byte) (EnergyRequest, error) {
	var req EnergyRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return EnergyRequest{}, fmt.Errorf("%w: energy request: %w", ErrInvalidInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return EnergyRequest{}, fmt.Errorf("%w: energy request: data after the JSON object", ErrInvalidInput)
	}
	return req, req.Validate()
}

// Validate checks the token counts (each from 0 to MaxRequestTokens; tokens, or
// input_tokens and/or output_tokens, or all of them when tokens is the sum of the
// others), the names' lengths and the overrides. Errors wrap ErrInvalidInput.
func (r *EnergyRequest) Validate() error {
	if r.Tokens == nil && r.InputTokens == nil && r.OutputTokens == nil {
		return fmt.Errorf("%w: no token count: give tokens (input plus output tokens)", ErrInvalidInput)
	}
	for _, c := range []struct {
		name string
		n    *int64
	}{{"tokens", r.Tokens}, {"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens}} {
		if c.n != nil && (*c.n < 0 || *c.n > MaxRequestTokens) {
			return fmt.Errorf("%w: %s %d: want 0 to %d", ErrInvalidInput, c.name, *c.n, int64(MaxRequestTokens))
		}
	}
	if r.Tokens != nil && (r.InputTokens != nil || r.OutputTokens != nil) && *r.Tokens != r.splitTokens() {
		return fmt.Errorf("%w: tokens %d is not input_tokens plus output_tokens (%d): give tokens alone",
			ErrInvalidInput, *r.Tokens, r.splitTokens())
	}
	if len(r.Model) > MaxNameBytes || len(r.Region) > MaxNameBytes {
		return fmt.Errorf("%w: model and region may have at most %d bytes", ErrInvalidInput, MaxNameBytes)
	}
	return ValidateOverrides(r.IntensityOverrides)
}

// splitTokens is input_tokens plus output_tokens, at most 2 · MaxRequestTokens once
// validated: no overflow.
func (r *EnergyRequest) splitTokens() int64 {
	var n int64
	for _, c := range []*int64{r.InputTokens, r.OutputTokens} {
		if c != nil {
			n += *c
		}
	}
	return n
}

// TotalTokens is the request's tokens: tokens when given, else input_tokens plus
// output_tokens. The request must be valid.
func (r *EnergyRequest) TotalTokens() int64 {
	if r.Tokens != nil {
		return *r.Tokens
	}
	return r.splitTokens()
}

// ValidateOverrides checks intensity overrides: at most MaxIntensityOverrides regions,
// each named (at most MaxNameBytes), each intensity from 0 to MaxGridIntensity g/kWh,
// and no region given twice (ignoring case and surrounding space) with two values.
// Errors wrap ErrInvalidInput.
func ValidateOverrides(overrides map[string]float64) error {
	if len(overrides) > MaxIntensityOverrides {
		return fmt.Errorf("%w: %d intensity overrides, at most %d", ErrInvalidInput, len(overrides), MaxIntensityOverrides)
	}
	seen := make(map[string]float64, len(overrides))
	for region, v := range overrides {
		if strings.TrimSpace(region) == "" || len(region) > MaxNameBytes {
			return fmt.Errorf("%w: intensity override for region %q: want a name of 1 to %d bytes", ErrInvalidInput, region, MaxNameBytes)
		}
		if !validIntensity(v) {
			return fmt.Errorf("%w: intensity override for region %q: %v gCO2/kWh, want 0 to %v", ErrInvalidInput, region, v, MaxGridIntensity)
		}
		key := strings.ToLower(strings.TrimSpace(region))
		if prev, ok := seen[key]; ok && prev != v {
			return fmt.Errorf("%w: intensity override for region %q is given twice, as %v and %v gCO2/kWh", ErrInvalidInput, key, prev, v)
		}
		seen[key] = v
	}
	return nil
}

// EnergyEstimate is the answer to an EnergyRequest. Wh and CO2Grams are the documented
// members (wh, co2_grams); the others are Cairn's account of how they were reached.
type EnergyEstimate struct {
	// Wh = Tokens/1000 · WhPer1kTokens; CO2Grams = Wh/1000 · IntensityGPerKWh.
	Wh       float64 `json:"wh"`
	CO2Grams float64 `json:"co2_grams"`
	// Model is as requested; MatchedModel the DefaultEnergyRates key used ("" when the
	// fallback rate was).
	Model        string `json:"model"`
	MatchedModel string `json:"matched_model"`
	ModelKnown   bool   `json:"model_known"`
	// Region is the region whose intensity was used: the requested one when known, else
	// WorldRegion. RequestedRegion is the request's (after a server's default);
	// MatchedRegion the key of the overrides or of DefaultGridIntensity used.
	Region          string `json:"region"`
	RequestedRegion string `json:"requested_region"`
	MatchedRegion   string `json:"matched_region"`
	RegionKnown     bool   `json:"region_known"`
	// Tokens is the tokens estimated (tokens, or input plus output tokens).
	Tokens int64 `json:"tokens"`
	// WhPer1kTokens is the rate used and RateSource where it came from (SourceTable,
	// SourceFallback); IntensityGPerKWh is the intensity and IntensitySource one of the
	// Source constants.
	WhPer1kTokens    float64 `json:"wh_per_1k_tokens"`
	RateSource       string  `json:"rate_source"`
	IntensityGPerKWh float64 `json:"intensity_g_per_kwh"`
	IntensitySource  string  `json:"intensity_source"`
	// Fallbacks lists which defaults were used (FallbackModel, FallbackRegion), and
	// Notes says so in words; both are empty, not null, when none was.
	Fallbacks []string `json:"fallbacks"`
	Notes     []string `json:"notes"`
}

// EstimateEnergy computes the energy and CO2 of req's tokens. It fails only when req is
// invalid (see Validate); unknown models and regions use the fallbacks and say so.
func EstimateEnergy(req EnergyRequest) (EnergyEstimate, error) {
	if err := req.Validate(); err != nil {
		return EnergyEstimate{}, err
	}
	est := EnergyEstimate{Model: req.Model, RequestedRegion: req.Region, Tokens: req.TotalTokens(), Fallbacks: []string{}, Notes: []string{}}
	est.WhPer1kTokens, est.MatchedModel, est.ModelKnown = ModelRate(req.Model)
	est.IntensityGPerKWh, est.MatchedRegion, est.RegionKnown = GridIntensity(req.Region, req.IntensityOverrides)
	est.RateSource = rateSource(est.ModelKnown)
	est.IntensitySource = intensitySource(est.MatchedRegion, est.RegionKnown, req.IntensityOverrides)
	est.Region = req.Region
	if !est.RegionKnown {
		est.Region = WorldRegion
	}
	est.Wh = energyWh(est.Tokens, est.WhPer1kTokens)
	est.CO2Grams = co2Grams(est.Wh, est.IntensityGPerKWh)
	if !est.ModelKnown {
		est.Fallbacks = append(est.Fallbacks, FallbackModel)
		est.Notes = append(est.Notes, modelFallbackNote(req.Model))
	}
	if !est.RegionKnown {
		est.Fallbacks = append(est.Fallbacks, FallbackRegion)
		est.Notes = append(est.Notes, regionFallbackNote(req.Region, est.IntensityGPerKWh))
	}
	return est, nil
}

// rateSource says where a model's rate came from.
func rateSource(known bool) string {
	if known {
		return SourceTable
	}
	return SourceFallback
}

// intensitySource says whether the key GridIntensity matched is an override's.
func intensitySource(matched string, known bool, overrides map[string]float64) string {
	if !known {
		return SourceFallback
	}
	for region := range overrides {
		if strings.ToLower(strings.TrimSpace(region)) == matched {
			return SourceOverride
		}
	}
	return SourceTable
}

func modelFallbackNote(model string) string {
	rate := strconv.FormatFloat(FallbackEnergyRate, 'f', -1, 64)
	if strings.TrimSpace(model) == "" {
		return "no model given: used the default rate of " + rate + " Wh per 1000 tokens"
	}
	return fmt.Sprintf("model %q is not in the energy rate table: used the default rate of %s Wh per 1000 tokens", model, rate)
}

// regionFallbackNote says that region fell back to WorldRegion's intensity g.
func regionFallbackNote(region string, g float64) string {
	text := strconv.FormatFloat(g, 'f', -1, 64)
	if strings.TrimSpace(region) == "" {
		return fmt.Sprintf("no region given: used region %s, %s gCO2/kWh", WorldRegion, text)
	}
	return fmt.Sprintf("region %q is not in the grid intensity table: used region %s, %s gCO2/kWh", region, WorldRegion, text)
}
