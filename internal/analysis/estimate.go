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
// POST /api/energy/estimate). Give Tokens, or InputTokens and/or OutputTokens, not both.
type EnergyRequest struct {
	Model        string `json:"model"`
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	Tokens       *int64 `json:"tokens,omitempty"`
	// Region is matched as GridIntensity describes; empty uses FallbackGridIntensity
	// (a server fills in its configured default region before estimating).
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

// Validate checks the token counts (given one way, each from 0 to MaxRequestTokens), the
// names' lengths and the overrides. Errors wrap ErrInvalidInput.
func (r *EnergyRequest) Validate() error {
	if r.Tokens != nil && (r.InputTokens != nil || r.OutputTokens != nil) {
		return fmt.Errorf("%w: give tokens or input_tokens/output_tokens, not both", ErrInvalidInput)
	}
	if r.Tokens == nil && r.InputTokens == nil && r.OutputTokens == nil {
		return fmt.Errorf("%w: no token count: give tokens, or input_tokens and/or output_tokens", ErrInvalidInput)
	}
	for _, c := range []struct {
		name string
		n    *int64
	}{{"tokens", r.Tokens}, {"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens}} {
		if c.n != nil && (*c.n < 0 || *c.n > MaxRequestTokens) {
			return fmt.Errorf("%w: %s %d: want 0 to %d", ErrInvalidInput, c.name, *c.n, int64(MaxRequestTokens))
		}
	}
	if len(r.Model) > MaxNameBytes || len(r.Region) > MaxNameBytes {
		return fmt.Errorf("%w: model and region may have at most %d bytes", ErrInvalidInput, MaxNameBytes)
	}
	return ValidateOverrides(r.IntensityOverrides)
}

// ValidateOverrides checks intensity overrides: at most MaxIntensityOverrides regions,
// each named (at most MaxNameBytes), each intensity from 0 to MaxGridIntensity g/kWh.
// Errors wrap ErrInvalidInput.
func ValidateOverrides(overrides map[string]float64) error {
	if len(overrides) > MaxIntensityOverrides {
		return fmt.Errorf("%w: %d intensity overrides, at most %d", ErrInvalidInput, len(overrides), MaxIntensityOverrides)
	}
	for region, v := range overrides {
		if strings.TrimSpace(region) == "" || len(region) > MaxNameBytes {
			return fmt.Errorf("%w: intensity override for region %q: want a name of 1 to %d bytes", ErrInvalidInput, region, MaxNameBytes)
		}
		if !validIntensity(v) {
			return fmt.Errorf("%w: intensity override for region %q: %v gCO2/kWh, want 0 to %v", ErrInvalidInput, region, v, MaxGridIntensity)
		}
	}
	return nil
}

// EnergyEstimate is the answer to an EnergyRequest.
type EnergyEstimate struct {
	// Model is as requested; MatchedModel the DefaultEnergyRates key used ("" when the
	// fallback rate was).
	Model        string `json:"model"`
	MatchedModel string `json:"matched_model"`
	ModelKnown   bool   `json:"model_known"`
	// Region is as requested; MatchedRegion the key of the overrides or of
	// DefaultGridIntensity used ("" when the fallback intensity was).
	Region        string `json:"region"`
	MatchedRegion string `json:"matched_region"`
	RegionKnown   bool   `json:"region_known"`
	// Tokens is input plus output tokens (or the tokens given).
	Tokens int64 `json:"tokens"`
	// WhPer1kTokens is the rate used, IntensityGPerKWh the intensity, and
	// IntensitySource one of the Source constants.
	WhPer1kTokens    float64 `json:"wh_per_1k_tokens"`
	IntensityGPerKWh float64 `json:"intensity_g_per_kwh"`
	IntensitySource  string  `json:"intensity_source"`
	// Wh = Tokens/1000 · WhPer1kTokens; CO2g = Wh/1000 · IntensityGPerKWh.
	Wh   float64 `json:"wh"`
	CO2g float64 `json:"co2_g"`
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
	var tokens int64
	for _, n := range []*int64{req.Tokens, req.InputTokens, req.OutputTokens} {
		if n != nil {
			tokens += *n // at most 2 · MaxRequestTokens: no overflow
		}
	}
	est := EnergyEstimate{Model: req.Model, Region: req.Region, Tokens: tokens, Fallbacks: []string{}, Notes: []string{}}
	est.WhPer1kTokens, est.MatchedModel, est.ModelKnown = ModelRate(req.Model)
	est.IntensityGPerKWh, est.MatchedRegion, est.RegionKnown = GridIntensity(req.Region, req.IntensityOverrides)
	est.IntensitySource = intensitySource(est.MatchedRegion, est.RegionKnown, req.IntensityOverrides)
	est.Wh = energyWh(tokens, est.WhPer1kTokens)
	est.CO2g = co2Grams(est.Wh, est.IntensityGPerKWh)
	if !est.ModelKnown {
		est.Fallbacks = append(est.Fallbacks, FallbackModel)
		est.Notes = append(est.Notes, modelFallbackNote(req.Model))
	}
	if !est.RegionKnown {
		est.Fallbacks = append(est.Fallbacks, FallbackRegion)
		est.Notes = append(est.Notes, regionFallbackNote(req.Region))
	}
	return est, nil
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
		return "no model given: used the fallback rate of " + rate + " Wh per 1000 tokens"
	}
	return fmt.Sprintf("model %q is not in the energy rate table: used the fallback rate of %s Wh per 1000 tokens", model, rate)
}

func regionFallbackNote(region string) string {
	g := strconv.FormatFloat(FallbackGridIntensity, 'f', -1, 64)
	if strings.TrimSpace(region) == "" {
		return "no region given: used the fallback intensity of " + g + " gCO2/kWh (world average)"
	}
	return fmt.Sprintf("region %q is not in the grid intensity table: used the fallback intensity of %s gCO2/kWh (world average)", region, g)
}
