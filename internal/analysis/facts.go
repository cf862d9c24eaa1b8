package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Span attributes the analyses read (OpenTelemetry GenAI semantic conventions, and the
// cloud resource convention for the region).
const (
	AttrInputTokens      = "gen_ai.usage.input_tokens"
	AttrPromptTokens     = "gen_ai.usage.prompt_tokens" // older name of input tokens
	AttrOutputTokens     = "gen_ai.usage.output_tokens"
	AttrCompletionTokens = "gen_ai.usage.completion_tokens" // older name of output tokens
	AttrCostUSD          = "gen_ai.usage.cost_usd"
	AttrCairnCostUSD     = "cairn.cost_usd"
	AttrResponseModel    = "gen_ai.response.model"
	AttrRequestModel     = "gen_ai.request.model"
	AttrCloudRegion      = "cloud.region"
)

// maxCostUSD bounds the cost a span may report; a larger one is taken as not given, so
// that sums and squares of costs stay finite.
const maxCostUSD = 1e12

// SpanFacts are the figures of one span that the analyses use. A Has field is false when
// the span lacks the figure or carries a value that cannot be one; the figure is then
// skipped, for its dimension alone.
//
// Attributes are read as follows; a number may be a JSON number or a decimal string
// (pkg/chain seals integers beyond 2^53−1 as strings):
//
//   - InputTokens: gen_ai.usage.input_tokens, else gen_ai.usage.prompt_tokens. A token
//     count must be a non-negative integer.
//   - OutputTokens: gen_ai.usage.output_tokens, else gen_ai.usage.completion_tokens.
//   - CostUSD: gen_ai.usage.cost_usd, else cairn.cost_usd; finite, from 0 to 1e12.
//   - LatencyMS: (end_time_ns − start_time_ns) / 1e6, when end is not before start.
//   - Model: gen_ai.response.model (the model that answered), else gen_ai.request.model.
//   - Region: cloud.region; empty when absent.
type SpanFacts struct {
	InputTokens, OutputTokens       int64
	HasInputTokens, HasOutputTokens bool
	CostUSD                         float64
	HasCost                         bool
	LatencyMS                       float64
	HasLatency                      bool
	Model, Region                   string
}

// FactsOf reads the figures of body. It never fails: what cannot be read is absent.
func FactsOf(body *protocol.SpanBody) SpanFacts {
	var f SpanFacts
	a := body.Attributes
	f.InputTokens, f.HasInputTokens = firstCount(a, AttrInputTokens, AttrPromptTokens)
	f.OutputTokens, f.HasOutputTokens = firstCount(a, AttrOutputTokens, AttrCompletionTokens)
	for _, key := range []string{AttrCostUSD, AttrCairnCostUSD} {
		if v, ok := a[key]; ok {
			if c, ok := number(v); ok && c >= 0 && c <= maxCostUSD {
				f.CostUSD, f.HasCost = c, true
			}
			break
		}
	}
	if body.EndTimeNS >= body.StartTimeNS && body.StartTimeNS >= 0 {
		f.LatencyMS, f.HasLatency = float64(body.EndTimeNS-body.StartTimeNS)/1e6, true
	}
	f.Model = firstString(a, AttrResponseModel, AttrRequestModel)
	f.Region = firstString(a, AttrCloudRegion)
	return f
}

// Tokens returns input plus output tokens, and false when the span has neither count (or
// their sum overflows).
func (f *SpanFacts) Tokens() (int64, bool) {
	if !f.HasInputTokens && !f.HasOutputTokens {
		return 0, false
	}
	sum := f.InputTokens + f.OutputTokens // both are >= 0: overflow makes it negative
	return sum, sum >= 0
}

// DecodeBody decodes a canonical body, keeping numbers as json.Number so that integers
// keep every digit.
func DecodeBody(canonical []byte) (protocol.SpanBody, error) {
	var body protocol.SpanBody
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return body, fmt.Errorf("decode span body: %w", err)
	}
	return body, nil
}

// firstCount returns the token count under the first of keys the attributes hold. The
// first key present decides, even when its value is not a count.
func firstCount(attrs map[string]any, keys ...string) (int64, bool) {
	for _, key := range keys {
		if v, ok := attrs[key]; ok {
			return count(v)
		}
	}
	return 0, false
}

// firstString returns the non-empty string under the first of keys that holds one.
func firstString(attrs map[string]any, keys ...string) string {
	for _, key := range keys {
		if s, ok := attrs[key].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// count returns v as a non-negative integer: a Go integer, an integral float, or a
// json.Number or string holding one in decimal.
func count(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		return countText(string(n))
	case string:
		return countText(n)
	}
	switch rv := reflect.ValueOf(v); {
	case rv.CanInt():
		return rv.Int(), rv.Int() >= 0
	case rv.CanUint():
		return int64(rv.Uint()), rv.Uint() <= math.MaxInt64
	case rv.CanFloat():
		return floatCount(rv.Float())
	}
	return 0, false
}

// countText parses a decimal integer, or a decimal number with an integral value (such
// as 12.0 or 1.2e3).
func countText(s string) (int64, bool) {
	if !isDecimal(s) {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n >= 0
	}
	f, ok := numberText(s)
	if !ok {
		return 0, false
	}
	return floatCount(f)
}

// floatCount returns f as a count when it is a non-negative integral value below 2^63.
func floatCount(f float64) (int64, bool) {
	if !(f >= 0 && f < math.MaxInt64 && f == math.Trunc(f)) {
		return 0, false
	}
	return int64(f), true
}

// number returns v as a finite float64: a Go number, or a json.Number or string holding
// a decimal number.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		return numberText(string(n))
	case string:
		return numberText(n)
	}
	switch rv := reflect.ValueOf(v); {
	case rv.CanInt():
		f = float64(rv.Int())
	case rv.CanUint():
		f = float64(rv.Uint())
	case rv.CanFloat():
		f = rv.Float()
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// numberText parses s when it is a decimal number in JSON's grammar (no hex, no
// underscores, no "Inf" or "NaN") with a finite value.
func numberText(s string) (float64, bool) {
	if !isDecimal(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// isDecimal reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isDecimal(s string) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if n := digits(); n == 0 || (n > 1 && s[i-n] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
