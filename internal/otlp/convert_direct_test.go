package otlp

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The conversion as it was before attributeMap: each OTLP value to the OpenTelemetry Go
// value the SDK's OTLP exporter sends as it, then chain.AttributeMap, which is how the Go
// SDK path seals. TestAttributeMapIsTheSDKPath holds the direct conversion to it.

// sdkAttributeMap converts m through OpenTelemetry Go values and chain.AttributeMap.
func sdkAttributeMap(m pcommon.Map) (map[string]any, error) {
	kvs, err := sdkKeyValues(nil, m, 1)
	if err != nil {
		return nil, err
	}
	return chain.AttributeMap(kvs), nil
}

// sdkKeyValues appends the attributes of m to kvs as the OpenTelemetry Go SDK holds them,
// in order; depth is the nesting level of m in the body.
func sdkKeyValues(kvs []attribute.KeyValue, m pcommon.Map, depth int) ([]attribute.KeyValue, error) {
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		var sv attribute.Value
		if sv, err = sdkValue(v, depth+1); err != nil {
			if depth == 1 {
				err = fmt.Errorf("attribute %q: %w", k, err)
			}
			return false
		}
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: sv})
		return true
	})
	return kvs, err
}

// sdkValue is the OpenTelemetry Go value the SDK's OTLP exporter sends as v; depth is v's
// nesting level in the body.
func sdkValue(v pcommon.Value, depth int) (attribute.Value, error) {
	if depth > protocol.MaxBodyNesting {
		return attribute.Value{}, fmt.Errorf("values nest the body deeper than %d levels", protocol.MaxBodyNesting)
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return attribute.StringValue(v.Str()), nil
	case pcommon.ValueTypeBool:
		return attribute.BoolValue(v.Bool()), nil
	case pcommon.ValueTypeInt:
		return attribute.Int64Value(v.Int()), nil
	case pcommon.ValueTypeDouble:
		return attribute.Float64Value(v.Double()), nil
	case pcommon.ValueTypeBytes:
		return attribute.ByteSliceValue(v.Bytes().AsRaw()), nil
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		vs := make([]attribute.Value, s.Len())
		for i := range vs {
			var err error
			if vs[i], err = sdkValue(s.At(i), depth+1); err != nil {
				return attribute.Value{}, err
			}
		}
		return attribute.SliceValue(vs...), nil
	case pcommon.ValueTypeMap:
		kvs, err := sdkKeyValues(nil, v.Map(), depth)
		if err != nil {
			return attribute.Value{}, err
		}
		return attribute.MapValue(kvs...), nil
	default:
		return attribute.Value{}, nil
	}
}

// TestAttributeMapIsTheSDKPath compares the direct conversion with the one through
// OpenTelemetry Go values over every value type and its corners, and over generated
// attribute sets: the same map, the same canonical bytes, the same error.
func TestAttributeMapIsTheSDKPath(t *testing.T) {
	cases := map[string]func(m pcommon.Map){
		"empty": func(pcommon.Map) {},
		"strings": func(m pcommon.Map) {
			m.PutStr("plain", "gpt-4o")
			m.PutStr("escapes", "a\"b\\c\n\t\r\b\f\x00\x1f\x7f</script>&")
			m.PutStr("non-ASCII", "héllo wörld — 日本語 🦜 \u2028\u2029\ufeff")
			m.PutStr("invalid UTF-8", "a\xffb\xc3(\xed\xa0\x80")
			m.PutStr("", "empty key")
			m.PutStr("é", "keys sort as UTF-16")
			m.PutStr("🦜", "beyond the BMP")
			m.PutStr("\uffff", "after the surrogates")
		},
		"ints": func(m pcommon.Map) {
			for i, n := range []int64{0, 1, -1, 255, 256, 1<<53 - 1, -(1<<53 - 1), 1 << 53, -(1 << 53), 1<<53 + 1, math.MaxInt64, math.MinInt64} {
				m.PutInt(fmt.Sprintf("i%02d", i), n)
			}
		},
		"doubles": func(m pcommon.Map) {
			for i, f := range []float64{0, math.Copysign(0, -1), 1.5, -2.25, 1e21, -1e21, 1e20, 1 << 53, 1<<53 - 1, -(1 << 53), 9007199254740993,
				1e-7, 1e-6, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1.0 / 3} {
				m.PutDouble(fmt.Sprintf("d%02d", i), f)
			}
		},
		"bools and empties": func(m pcommon.Map) {
			m.PutBool("t", true)
			m.PutBool("f", false)
			m.PutEmpty("empty")
		},
		"bytes": func(m pcommon.Map) {
			m.PutEmptyBytes("none")
			m.PutEmptyBytes("binary").FromRaw([]byte{0, 0xff, 0xfe, '"', '\\', 0x80})
		},
		"arrays": func(m pcommon.Map) {
			m.PutEmptySlice("none")
			s := m.PutEmptySlice("mixed")
			s.AppendEmpty().SetStr("x")
			s.AppendEmpty().SetInt(1 << 60)
			s.AppendEmpty().SetDouble(math.NaN())
			s.AppendEmpty().SetBool(true)
			s.AppendEmpty()
			s.AppendEmpty().SetEmptyBytes().FromRaw([]byte("hi"))
			s.AppendEmpty().SetEmptySlice().AppendEmpty().SetEmptyMap().PutInt("n", -7)
			ints := m.PutEmptySlice("ints")
			for i := range 7 {
				ints.AppendEmpty().SetInt(int64(i) - 3)
			}
		},
		"kvlists": func(m pcommon.Map) {
			m.PutEmptyMap("none")
			kv := m.PutEmptyMap("nested")
			kv.PutStr("b", "2")
			kv.PutInt("a", 1)
			kv.PutEmptyMap("deeper").PutDouble("x", math.Inf(-1))
			for i := range 9 { // more than the SDK's five-element fast path
				kv.PutInt(fmt.Sprintf("k%d", 8-i), int64(i))
			}
		},
		// The attributes are level 1 (see attributeMap), "deep" 2: 510 arrays put the
		// string at level 512, 511 at 513.
		"nested to the limit": func(m pcommon.Map) { nest(m.PutEmpty("deep"), protocol.MaxBodyNesting-2) },
		"nested past the limit": func(m pcommon.Map) {
			m.PutStr("a", "fine")
			nest(m.PutEmpty("deep"), protocol.MaxBodyNesting-1)
		},
		"map nested past the limit": func(m pcommon.Map) {
			v := m.PutEmpty("deep")
			for range protocol.MaxBodyNesting {
				v = v.SetEmptyMap().PutEmpty("k")
			}
			v.SetStr("bottom")
		},
	}
	for name, fill := range cases {
		m := pcommon.NewMap()
		fill(m)
		err := compareAttributeMaps(t, name, m)
		if wantErr := strings.Contains(name, "past the limit"); (err != nil) != wantErr {
			t.Errorf("%s: error %v, want an error: %v", name, err, wantErr)
		}
	}
	if err := compareAttributeMaps(t, "duplicate keys", duplicateKeys(t)); err != nil {
		t.Errorf("duplicate keys: %v", err)
	}

	rng := rand.New(rand.NewPCG(22, 1))
	for i := range 300 {
		m := pcommon.NewMap()
		for k := range rng.IntN(12) {
			randomValue(rng, m.PutEmpty(randomString(rng)+fmt.Sprint(k)), 4)
		}
		// Keys that differ only in invalid UTF-8 have no canonical form: an error both ways.
		_ = compareAttributeMaps(t, fmt.Sprintf("generated %d", i), m)
	}
}

// compareAttributeMaps fails t unless both conversions of m agree, and returns the
// direct conversion's error, or the canonical form's.
func compareAttributeMaps(t *testing.T, name string, m pcommon.Map) error {
	t.Helper()
	want, wantErr := sdkAttributeMap(m)
	got, err := attributeMap(m, 1)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("%s: error %v, want %v", name, err, wantErr)
		return err
	}
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: map\n got %#v\nwant %#v", name, got, want)
	}
	gotBody, gotErr := protocol.SpanBody{Name: "chat", Attributes: got}.Canonical()
	wantBody, wantErr := protocol.SpanBody{Name: "chat", Attributes: want}.Canonical()
	if !bytes.Equal(gotBody, wantBody) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Errorf("%s: canonical body\n got %s (%v)\nwant %s (%v)", name, gotBody, gotErr, wantBody, wantErr)
	}
	return gotErr
}

// nest makes v an array in an array … depth levels deep, around a string.
func nest(v pcommon.Value, depth int) {
	for range depth {
		v = v.SetEmptySlice().AppendEmpty()
	}
	v.SetStr("bottom")
}

// duplicateKeys returns a span's attributes with keys repeated, as only a request off the
// wire holds them (pcommon.Map's Put methods replace).
func duplicateKeys(t *testing.T) pcommon.Map {
	t.Helper()
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"chat","attributes":[
		{"key":"a","value":{"intValue":"1"}},{"key":"b","value":{"stringValue":"x"}},{"key":"a","value":{"stringValue":"last"}},
		{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"1"}},{"key":"k","value":{"boolValue":true}}]}}}]}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	attrs := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	if attrs.Len() != 4 {
		t.Fatalf("the decoder kept %d attributes, want 4 with a repeated key", attrs.Len())
	}
	return attrs
}

// randomValue sets v to a random value nested at most depth levels.
func randomValue(rng *rand.Rand, v pcommon.Value, depth int) {
	switch k := rng.IntN(9); {
	case k == 0:
		v.SetStr(randomString(rng))
	case k == 1:
		v.SetBool(rng.IntN(2) == 0)
	case k == 2:
		v.SetInt(int64(rng.Uint64()) >> rng.IntN(64))
	case k == 3:
		v.SetDouble(math.Float64frombits(rng.Uint64()))
	case k == 4:
		v.SetDouble(float64(rng.IntN(1<<20)-1<<19) / float64(int(1)<<rng.IntN(30)))
	case k == 5:
		b := make([]byte, rng.IntN(9))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		v.SetEmptyBytes().FromRaw(b)
	case k == 6 && depth > 0:
		s := v.SetEmptySlice()
		for range rng.IntN(4) {
			randomValue(rng, s.AppendEmpty(), depth-1)
		}
	case k == 7 && depth > 0:
		m := v.SetEmptyMap()
		for range rng.IntN(4) {
			randomValue(rng, m.PutEmpty(randomString(rng)), depth-1)
		}
	default: // left empty
	}
}

// randomString returns a short string of ASCII, escapes, non-ASCII and invalid bytes.
func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "gen_ai.", "\"", "\\", "\n", "\x01", "é", "日", "🦜", "\ufffd", "\xff", "\xed\xa0\x80", " "}
	var b strings.Builder
	for range rng.IntN(6) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}
