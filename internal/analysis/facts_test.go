package analysis

import (
	"encoding/json"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestCountAndNumber(t *testing.T) {
	cases := []struct {
		in       any
		count    int64
		isCount  bool
		num      float64
		isNumber bool
	}{
		{int64(42), 42, true, 42, true},
		{42, 42, true, 42, true},
		{int32(7), 7, true, 7, true},
		{uint64(9), 9, true, 9, true},
		{uint8(3), 3, true, 3, true},
		{int16(-2), 0, false, -2, true},
		{float32(2), 2, true, 2, true},
		{uint64(1 << 63), 0, false, 1 << 63, true},
		{float64(12), 12, true, 12, true},
		{12.5, 0, false, 12.5, true},
		{int64(-1), 0, false, -1, true},
		{json.Number("9007199254740993"), 9007199254740993, true, 9007199254740992, true}, // 2^53+1: exact as a count
		{"9007199254740993", 9007199254740993, true, 9007199254740992, true},              // pkg/chain's big ints
		{"1.2e3", 1200, true, 1200, true},
		{"12.0", 12, true, 12, true},
		{"0.25", 0, false, 0.25, true},
		{"-3", 0, false, -3, true},
		{"0x10", 0, false, 0, false},
		{"1_000", 0, false, 0, false},
		{"NaN", 0, false, 0, false},
		{"+Inf", 0, false, 0, false},
		{"1e400", 0, false, 0, false},
		{"01", 0, false, 0, false},
		{" 1", 0, false, 0, false},
		{"", 0, false, 0, false},
		{"1.", 0, false, 0, false},
		{"1e", 0, false, 0, false},
		{true, 0, false, 0, false},
		{nil, 0, false, 0, false},
		{[]any{1}, 0, false, 0, false},
	}
	for _, c := range cases {
		n, ok := count(c.in)
		if ok != c.isCount || (ok && n != c.count) {
			t.Errorf("count(%#v) = %d, %v; want %d, %v", c.in, n, ok, c.count, c.isCount)
		}
		f, ok := number(c.in)
		if ok != c.isNumber || (ok && f != c.num) {
			t.Errorf("number(%#v) = %v, %v; want %v, %v", c.in, f, ok, c.num, c.isNumber)
		}
	}
}

func TestFactsOf(t *testing.T) {
	cases := map[string]struct {
		body protocol.SpanBody
		want SpanFacts
	}{
		"current names": {protocol.SpanBody{StartTimeNS: 1_000_000, EndTimeNS: 251_000_000, Attributes: map[string]any{
			AttrInputTokens: int64(120), AttrOutputTokens: json.Number("30"), AttrCostUSD: 0.002,
			AttrRequestModel: "gpt-4o", AttrResponseModel: "gpt-4o-2024-08-06", AttrCloudRegion: "eu-west-1"}},
			SpanFacts{InputTokens: 120, OutputTokens: 30, HasInputTokens: true, HasOutputTokens: true, CostUSD: 0.002, HasCost: true,
				LatencyMS: 250, HasLatency: true, Model: "gpt-4o-2024-08-06", Region: "eu-west-1"}},
		"older names": {protocol.SpanBody{Attributes: map[string]any{
			AttrPromptTokens: "7", AttrCompletionTokens: 3.0, AttrCairnCostUSD: "1.5", AttrRequestModel: "claude-3-haiku"}},
			SpanFacts{InputTokens: 7, OutputTokens: 3, HasInputTokens: true, HasOutputTokens: true, CostUSD: 1.5, HasCost: true,
				HasLatency: true, Model: "claude-3-haiku"}},
		// The current name, present, decides even when its value is bad.
		"current name wins": {protocol.SpanBody{Attributes: map[string]any{
			AttrInputTokens: "many", AttrPromptTokens: 5, AttrCostUSD: -1, AttrCairnCostUSD: 2}},
			SpanFacts{HasLatency: true}},
		"nothing, end before start": {protocol.SpanBody{StartTimeNS: 10, EndTimeNS: 9, Attributes: map[string]any{AttrResponseModel: ""}}, SpanFacts{}},
		"one count":                 {protocol.SpanBody{Attributes: map[string]any{AttrOutputTokens: 9}}, SpanFacts{OutputTokens: 9, HasOutputTokens: true, HasLatency: true}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FactsOf(&c.body); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		f    SpanFacts
		want int64
		ok   bool
	}{
		{SpanFacts{InputTokens: 3, OutputTokens: 4, HasInputTokens: true, HasOutputTokens: true}, 7, true},
		{SpanFacts{InputTokens: 3, HasInputTokens: true}, 3, true},
		{SpanFacts{HasOutputTokens: true}, 0, true},
		{SpanFacts{}, 0, false},
		{SpanFacts{InputTokens: 1 << 62, OutputTokens: 1 << 62, HasInputTokens: true, HasOutputTokens: true}, 0, false},
	} {
		if got, ok := c.f.Tokens(); ok != c.ok || (ok && got != c.want) {
			t.Errorf("%+v: %d, %v", c.f, got, ok)
		}
	}
}

func TestDecodeBody(t *testing.T) {
	// pkg/chain seals integers beyond 2^53−1 as decimal strings.
	body := protocol.SpanBody{Name: "n", Attributes: map[string]any{AttrInputTokens: "1152921504606846976"}, StartTimeNS: 5, EndTimeNS: 9}
	canonical, err := body.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBody(canonical)
	if err != nil {
		t.Fatal(err)
	}
	f := FactsOf(&got)
	if f.InputTokens != 1<<60 || f.LatencyMS != 4e-6 {
		t.Errorf("%+v", f)
	}
	if _, err := DecodeBody([]byte(`{"start_time_ns":"x"}`)); err == nil {
		t.Error("bad time accepted")
	}
}
