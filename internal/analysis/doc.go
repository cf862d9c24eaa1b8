// Package analysis computes what the local chain service reports about the calls in a
// chain: regression (drift) of token counts, cost and latency, and energy and CO2
// estimates. It reads span bodies (pkg/protocol) and never calls a model.
//
// Regression: for each dimension (input_tokens, output_tokens, cost_usd, latency_ms)
// every value in a window of recent entries is tested against the mean, sample standard
// deviation and quartiles (linear interpolation) of the window's values, with a z-score
// and Tukey's IQR fences; see Regress. RunRegression reads the window from a Chain and
// persists the run there; *store.Store is such a Chain.
//
// Energy: Wh = tokens/1000 · rate[model] and CO2 g = Wh/1000 · intensity[region], with
// the documented rates of DefaultEnergyRates and grid intensities of
// DefaultGridIntensity, which intensity overrides extend with custom regions; unknown
// models fall back to FallbackEnergyRate and unknown regions to WorldRegion's intensity,
// and results say so. See EstimateEnergy, EnergyOf and SummarizeEnergy.
//
// Span attributes are read as described on SpanFacts.
package analysis
