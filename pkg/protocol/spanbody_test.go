package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// TestSpanBodyCanonicalIsTheStructsJSON checks that Canonical, which writes the body's
// members from a map, gives exactly the canonical form of the struct's own JSON: the same
// members, names and encodings.
func TestSpanBodyCanonicalIsTheStructsJSON(t *testing.T) {
	bodies := map[string]SpanBody{
		"empty":          {},
		"nil attributes": {Name: "chat", Kind: "client", StartTimeNS: 1, EndTimeNS: 2},
		"a model call": {Name: "chat gpt-4o", Kind: "client", StatusCode: "OK", StatusDescription: "fine",
			StartTimeNS: 1795262412000000000, EndTimeNS: 1795262412900000000,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7",
			Attributes: map[string]any{"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": int64(412),
				"gen_ai.request.temperature": 0.2, "gen_ai.response.finish_reasons": []string{"stop"},
				"nested": map[string]any{"a": []any{1.5, nil, true}}}},
		"strings to escape":          {Name: "<b>\"x\"</b>\n", Kind: "\u2028", StatusDescription: "bad \xff byte", TraceID: "&"},
		"negative times":             {StartTimeNS: -5, EndTimeNS: math.MinInt64},
		"attributes of another type": {Attributes: map[string]any{"f32": float32(0.5), "n": json.Number("1.50")}},
	}
	for name, b := range bodies {
		t.Run(name, func(t *testing.T) {
			got, err := b.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			if b.Attributes == nil {
				b.Attributes = map[string]any{}
			}
			plain, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := canonical.Transform(plain)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Canonical:\n%s\nthe struct's JSON, canonical:\n%s", got, want)
			}
		})
	}
	if _, err := (SpanBody{Attributes: map[string]any{"n": int64(1 << 60)}}).Canonical(); err == nil {
		t.Error("an integer beyond 2^53−1 was sealed")
	}
}
