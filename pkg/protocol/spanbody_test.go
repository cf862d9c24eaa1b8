package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// TestSpanBodyCanonicalRefusesWhatCheckEntryRefuses builds bodies nested around
// MaxBodyNesting: Canonical must accept exactly those whose entry CheckEntry accepts.
func TestSpanBodyCanonicalRefusesWhatCheckEntryRefuses(t *testing.T) {
	nest := func(levels int, inner any) any {
		v := inner
		for range levels {
			v = []any{v}
		}
		return v
	}
	for _, levels := range []int{MaxBodyNesting - 3, MaxBodyNesting - 2, MaxBodyNesting - 1, MaxBodyNesting, MaxBodyNesting + 1} {
		for name, inner := range map[string]any{"a string": "x", "an empty array": []any{}, "an empty object": map[string]any{}} {
			body := SpanBody{Name: "deep", Kind: "client", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7",
				Attributes: map[string]any{"v": nest(levels, inner)}}
			plain, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := canonical.Transform(plain)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			e := &Entry{Seq: 1, TimestampNS: "0", TraceID: body.TraceID, SpanID: body.SpanID, SpanName: body.Name,
				SpanKind: body.Kind, CanonicalBody: raw, CanonicalHash: hex.EncodeToString(sum[:]), PrevHash: GenesisPrevHash}
			e.HMACHash = EntryHMAC(bytes.Repeat([]byte{1}, 32), e.PrevHash, e.CanonicalHash)
			checkErr := CheckEntry(e, nil)
			_, canonicalErr := body.Canonical()
			if (checkErr == nil) != (canonicalErr == nil) {
				t.Errorf("%s in %d arrays: CheckEntry says %v, Canonical says %v", name, levels, checkErr, canonicalErr)
			}
			if canonicalErr != nil && !errors.Is(canonicalErr, ErrMalformed) {
				t.Errorf("%s in %d arrays: %v does not wrap ErrMalformed", name, levels, canonicalErr)
			}
		}
	}
}
