package chain

import (
	"math"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

func TestJSONNumbers(t *testing.T) {
	tests := []struct {
		in   any // int64 or float64
		want any
	}{
		{int64(0), int64(0)},
		{int64(maxSafeInteger), int64(maxSafeInteger)},
		{int64(-maxSafeInteger), int64(-maxSafeInteger)},
		{int64(maxSafeInteger + 1), "9007199254740992"},
		{int64(-maxSafeInteger - 1), "-9007199254740992"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{0.1, 0.1},
		{math.Copysign(0, -1), math.Copysign(0, -1)},
		{float64(maxSafeInteger), float64(maxSafeInteger)},
		{float64(maxSafeInteger + 1), "9007199254740992"},
		{-1.5e20, "-150000000000000000000"},
		{1e21, 1e21},
		{math.MaxFloat64, math.MaxFloat64},
		{math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	}
	for _, tc := range tests {
		var got any
		switch v := tc.in.(type) {
		case int64:
			got = jsonInt(v)
		case float64:
			got = jsonFloat(v)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: got %#v, want %#v", tc.in, got, tc.want)
		}
		if _, err := canonical.Marshal(got); err != nil {
			t.Errorf("%v: canonical JSON refuses %#v: %v", tc.in, got, err)
		}
	}
}

func TestAttributeValueKinds(t *testing.T) {
	tests := []struct {
		name string
		in   attribute.Value
		want any
	}{
		{"empty", attribute.Value{}, nil},
		{"string", attribute.StringValue("s"), "s"},
		{"bool", attribute.BoolValue(false), false},
		{"empty int slice", attribute.Int64SliceValue(nil), []int64{}},
		{"empty bytes", attribute.ByteSliceValue(nil), ""},
		{"nested", attribute.SliceValue(attribute.SliceValue(attribute.Float64Value(math.NaN())), attribute.Value{}),
			[]any{[]any{"NaN"}, nil}},
		{"map with a repeated key keeps the last", attribute.MapValue(attribute.Int("k", 1), attribute.Int("k", 2)),
			map[string]any{"k": int64(2)}},
	}
	for _, tc := range tests {
		got := attributeValue(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
		if _, err := canonical.Marshal(map[string]any{"v": got}); err != nil {
			t.Errorf("%s: canonical JSON refuses %#v: %v", tc.name, got, err)
		}
	}
}
