package analysis

import "strings"

// Price is what a model charges, in US dollars per 1,000 tokens.
type Price struct {
	Input, Output float64
}

// DefaultPrices are the list prices the cost_usd dimension of a regression run uses, by
// model name (lowercase). They are the original product's table (snapshot of Anthropic's
// prices of 2026-05-07, USD per 1K tokens); it names no other provider's models, so a
// call to one gives a cost only when its span records it (see CostOf).
var DefaultPrices = map[string]Price{
	"claude-haiku-4-5-20251001": {Input: 0.0008, Output: 0.0040},
	"claude-haiku-4-5":          {Input: 0.0008, Output: 0.0040},
	"claude-sonnet-4-20250514":  {Input: 0.0030, Output: 0.0150},
	"claude-sonnet-4":           {Input: 0.0030, Output: 0.0150},
	"claude-sonnet-4-6":         {Input: 0.0030, Output: 0.0150},
	"claude-opus-4-7":           {Input: 0.0150, Output: 0.0750},
	"claude-opus-4-6":           {Input: 0.0150, Output: 0.0750},
}

// ModelPrice returns the price of model from DefaultPrices. The name is lowercased and
// anything up to its last "/" dropped ("anthropic/claude-sonnet-4" reads as
// "claude-sonnet-4"); then only an exact key matches, as a price is not guessed from a
// neighbouring model's.
func ModelPrice(model string) (Price, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	p, ok := DefaultPrices[name]
	return p, ok
}

// CostOf returns the cost of a call in US dollars, and false when it has none: the cost
// its span records (SpanFacts.CostUSD), else (input·price.Input + output·price.Output)/1000
// from DefaultPrices when the model has a price and the span both token counts.
func CostOf(f *SpanFacts) (float64, bool) {
	if f.HasCost {
		return f.CostUSD, true
	}
	p, ok := ModelPrice(f.Model)
	if !ok || !f.HasInputTokens || !f.HasOutputTokens {
		return 0, false
	}
	return (float64(f.InputTokens)*p.Input + float64(f.OutputTokens)*p.Output) / 1000, true
}
