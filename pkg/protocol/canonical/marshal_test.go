package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// sameAsRoundTrip fails t unless Marshal gives for v what encoding/json's text and its
// Transform give: the same bytes, or an error wrapping ErrInvalid for both.
func sameAsRoundTrip(t *testing.T, v any) {
	t.Helper()
	got, gotErr := Marshal(v)
	want, wantErr := marshalViaJSON(v)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("%#v:\n direct: %q, %v\n   json: %q, %v", v, got, gotErr, want, wantErr)
	case gotErr != nil && !errors.Is(gotErr, ErrInvalid):
		t.Fatalf("%#v: error %v does not wrap ErrInvalid", v, gotErr)
	case !bytes.Equal(got, want):
		t.Fatalf("%#v:\n direct: %s\n   json: %s", v, got, want)
	}
}

func TestMarshalDirectEdgeCases(t *testing.T) {
	deep := func(levels int) any {
		var v any = map[string]any{}
		for range levels - 1 {
			v = []any{v}
		}
		return v
	}
	tests := map[string]any{
		"null":                         nil,
		"booleans":                     []any{true, false},
		"escapes and HTML":             "a\"b\\c\nd\te\x00f\x1f<g>&h",
		"U+2028 and U+2029":            "\u2028\u2029",
		"non-ASCII":                    "naïve ✓ 𝄞 \ufffd",
		"an invalid byte":              "a\xffb",
		"a run of invalid bytes":       "\xff\xfe\xfd",
		"an encoded surrogate":         "\xed\xa0\x80",
		"a truncated sequence":         "\xe2\x82",
		"largest safe integers":        []int64{1<<53 - 1, -(1<<53 - 1)},
		"an unsafe int64":              int64(1 << 53),
		"an unsafe negative int64":     int64(-(1 << 53)),
		"an unsafe uint64":             uint64(1 << 53),
		"int and its kin":              []any{int(7), int32(-8), uint32(9), uint64(10)},
		"whole floats":                 []float64{0, 1, -2, 1e15, 1<<53 - 1},
		"negative zero":                math.Copysign(0, -1),
		"a whole float beyond 2^53":    float64(1 << 53),
		"1e20":                         1e20,
		"1e21 and up":                  []float64{1e21, 1.5e21, 1e300, -1e22},
		"fractions":                    []float64{0.1, 1.5, -4.25, 1e-6, 1e-7, 5e-324, 123456.789},
		"NaN":                          math.NaN(),
		"infinity":                     math.Inf(-1),
		"nil slices and maps":          map[string]any{"a": []any(nil), "b": []string(nil), "c": map[string]any(nil), "d": []float64(nil)},
		"empty slices and maps":        map[string]any{"a": []any{}, "b": []string{}, "c": map[string]any{}},
		"keys in UTF-16 order":         map[string]any{"\U0001F600": 1, "\uE000": 2, "a": 3, "": 4, "A": 5},
		"keys equal once made valid":   map[string]any{"\xff": 1, "\xfe": 2},
		"a key made valid":             map[string]any{"k\xff": 1, "k": 2},
		"an unsupported type":          float32(0.1),
		"an unsupported element":       []any{1, json.Number("2.50")},
		"an unsupported nested value":  map[string]any{"a": map[string]any{"b": struct{ X int }{3}}},
		"a nil pointer":                map[string]any{"a": (*int)(nil)},
		"1000 levels":                  deep(1000),
		"1001 levels":                  deep(1001),
		"an unsafe integer in a slice": []int64{1, 1 << 60},
		"NaN in a slice":               []float64{1, math.NaN()},
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) { sameAsRoundTrip(t, v) })
	}
}

// TestMarshalDirectMatchesRoundTrip compares the two ways over generated values.
func TestMarshalDirectMatchesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		sameAsRoundTrip(t, genValue(r, 0))
	}
}

var (
	genStrings = []string{"", "a", "gen_ai.request.model", "gpt-4o", "\xff", "\xfe", "a\xffb", "\u2028",
		"<&>", "\"\\", "\n\t\x01", "𝄞", "\uE000", "\U0001F600", "\ufffd", "ä", "A"}
	genFloats = []float64{0, math.Copysign(0, -1), 0.1, 1.5, -2, 1e-7, 1e20, 1e21, 1 << 53, 1<<53 - 1,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)}
	genInts = []int64{0, 1, -1, 412, 1<<53 - 1, 1 << 53, -(1 << 53), math.MaxInt64, math.MinInt64}
)

// genValue returns a random value of the kinds attributes are made of, now and then with
// one of another kind in it.
func genValue(r *rand.Rand, depth int) any {
	pick := r.IntN(14)
	if depth > 4 && pick >= 8 {
		pick = r.IntN(8)
	}
	switch pick {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return genStrings[r.IntN(len(genStrings))]
	case 3:
		return genInts[r.IntN(len(genInts))]
	case 4:
		if r.IntN(2) == 0 {
			return genFloats[r.IntN(len(genFloats))]
		}
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	case 5:
		return r.Int64N(1<<54) - 1<<53
	case 6:
		return uint64(r.Int64N(1 << 54))
	case 7:
		if r.IntN(20) == 0 {
			return float32(r.Float64())
		}
		return int(r.Int32())
	case 8:
		return genSlice(r, func() string { return genStrings[r.IntN(len(genStrings))] })
	case 9:
		return genSlice(r, func() float64 { return genFloats[r.IntN(len(genFloats))] })
	case 10:
		return genSlice(r, func() int64 { return genInts[r.IntN(len(genInts))] })
	case 11:
		return genSlice(r, func() bool { return r.IntN(2) == 0 })
	case 12:
		return genSlice(r, func() any { return genValue(r, depth+1) })
	default:
		if r.IntN(10) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range r.IntN(5) {
			m[genStrings[r.IntN(len(genStrings))]] = genValue(r, depth+1)
		}
		return m
	}
}

// genSlice returns nil, or up to 4 elements made by elem.
func genSlice[E any](r *rand.Rand, elem func() E) []E {
	if r.IntN(10) == 0 {
		return nil
	}
	s := make([]E, r.IntN(5))
	for i := range s {
		s[i] = elem()
	}
	return s
}

func BenchmarkMarshalAttributes(b *testing.B) {
	attrs := map[string]any{
		"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
		"gen_ai.usage.input_tokens": int64(412), "gen_ai.usage.output_tokens": int64(96), "gen_ai.request.temperature": 0.2,
		"gen_ai.response.finish_reasons": []string{"stop"}, "gen_ai.cost_usd": 0.00183,
		"gen_ai.prompt": "Summarize the quarterly report in three bullet points for the board.",
	}
	for _, way := range []struct {
		name    string
		marshal func(any) ([]byte, error)
	}{{"direct", Marshal}, {"via_json", marshalViaJSON}} {
		b.Run(way.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := way.marshal(attrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
