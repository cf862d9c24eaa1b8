package analysis

import (
	"testing"
)

// scanSeeds are bodies the scanner reads (canonical ones) and bodies it must hand to
// encoding/json (white space, escaped or repeated keys, unknown members, bad JSON).
var scanSeeds = []struct {
	body    string
	scanned bool // the scanner reads it
}{
	{`{"attributes":{"gen_ai.request.model":"claude-sonnet-4","gen_ai.usage.input_tokens":100,"gen_ai.usage.output_tokens":"55"},` +
		`"end_time_ns":"1795262400400000000","kind":"CLIENT","name":"chat","span_id":"01","start_time_ns":"1795262400000000000",` +
		`"status_code":"OK","status_description":"","trace_id":"02"}`, true},
	{`{"attributes":{"a":[1,{"b":[true,false,null]},"x\"y"],"cairn.cost_usd":"1e-3","gen_ai.usage.prompt_tokens":1.2e3,` +
		`"gen_ai.response.model":"gpt-4o\u00e9","gen_ai.usage.completion_tokens":true},"name":"n\\t"}`, true},
	{`{"attributes":{"gen_ai.usage.input_tokens":-1,"gen_ai.usage.cost_usd":{"v":1}},"start_time_ns":"-0","end_time_ns":"5"}`, true},
	{`{"attributes":{"gen_ai.usage.input_tokens":1e400}}`, true},
	{"{\"attributes\":{\"gen_ai.request.model\":\"\xff\"}}", true},
	{`{"attributes":{},"start_time_ns":"01"}`, false},
	{`{"attributes":{"gen_ai.usage.input_tokens":1,"gen_ai.usage.input_tokens":2}}`, false},
	{`{"attributes":{"GEN_AI.usage.input_tokens":7}}`, true}, // a key FactsOf does not read
	{`{"Attributes":{"gen_ai.usage.input_tokens":7}}`, false},
	{`{"attributes":{"gen_ai.usage.input_tokens":7}} `, false},
	{`{"attributes":{"gen_ai.usage.input_tokens":7}}{"x":1}`, false},
	{`{"attributes":{"gen_\u0061i.usage.input_tokens":7}}`, false},
	{`{"name":1}`, false},
	{`{"attributes":null}`, false},
	{`{"start_time_ns":"99999999999999999999"}`, false},
	{`{"attributes":{"x":01}}`, false},
	{`{"attributes":{"x":"\u12"}}`, false},
	{`[]`, false},
	{``, false},
}

// FuzzWindowFacts checks that the scanner never changes a result: where it reads a body,
// DecodeBody must succeed and FactsOf give the same facts; elsewhere windowFacts must
// answer exactly as DecodeBody and FactsOf do.
func FuzzWindowFacts(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		slow, slowErr := DecodeBody(b)
		fast, ok := scanFacts(b, map[string]any{})
		if ok && (slowErr != nil || FactsOf(&slow) != fast) {
			t.Fatalf("%q: scanner %+v; encoding/json %+v, %v", b, fast, FactsOf(&slow), slowErr)
		}
		got, err := windowFacts(b, map[string]any{})
		if (err != nil) != (slowErr != nil) || (err == nil && got != FactsOf(&slow)) {
			t.Fatalf("%q: windowFacts %+v, %v; encoding/json %+v, %v", b, got, err, FactsOf(&slow), slowErr)
		}
	})
}

// TestScannerReadsCanonicalBodies makes sure the fast path is the one taken for what the
// chain stores, and declined for the rest.
func TestScannerReadsCanonicalBodies(t *testing.T) {
	for _, s := range scanSeeds {
		if _, ok := scanFacts([]byte(s.body), map[string]any{}); ok != s.scanned {
			t.Errorf("%s: scanned %v, want %v", s.body, ok, s.scanned)
		}
	}
}
