package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// near reports whether got is want to within 1e-9, relatively.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// wantStats is a dimension's expected figures; z is NaN when z must be undefined (nil).
type wantStats struct {
	mean, stdDev, z, q1, q3, lower, upper float64
	zFlagged, iqrFlagged                  bool
}

// The figures below are worked by hand; quartiles use position (n−1)·p in the sorted
// baseline, the standard deviation divides by n−1.
func TestAssessHandComputed(t *testing.T) {
	cases := map[string]struct {
		values []float64 // the baseline, then the candidate
		want   wantStats
	}{
		// Baseline 0,0,0,0,10,10,10,10: mean 5, every deviation ±5, Σd² = 8·25 = 200,
		// s = √(200/7) = 5.345224838. Q1 at position 7·0.25 = 1.75: 0 + 0.75·(0−0) = 0;
		// Q3 at 5.25: 10 + 0.25·(10−10) = 10; IQR 10, fences −15 and 25.
		// x = 24: z = 19/5.345224838 = 3.554574517 > 3, but 24 < 25: z only.
		"z only": {[]float64{0, 0, 0, 0, 10, 10, 10, 10, 24}, wantStats{
			mean: 5, stdDev: math.Sqrt(200.0 / 7), z: 19 / math.Sqrt(200.0/7), q1: 0, q3: 10, lower: -15, upper: 25, zFlagged: true}},
		// Baseline 1..7 and 100: mean 128/8 = 16; deviations −15..−9 and 84,
		// Σd² = 225+196+169+144+121+100+81+7056 = 8092, s = √(8092/7) = √1156 = 34.
		// Q1 at 1.75: 2 + 0.75·1 = 2.75; Q3 at 5.25: 6 + 0.25·1 = 6.25; IQR 3.5, fences
		// 2.75 − 5.25 = −2.5 and 6.25 + 5.25 = 11.5. x = 20: z = 4/34 = 0.1176, but
		// 20 > 11.5: IQR only (the 100 in the baseline inflates s, not the quartiles).
		"iqr only": {[]float64{1, 2, 3, 4, 5, 6, 7, 100, 20}, wantStats{
			mean: 16, stdDev: 34, z: 4.0 / 34, q1: 2.75, q3: 6.25, lower: -2.5, upper: 11.5, iqrFlagged: true}},
		// Baseline 1..8: mean 4.5, Σd² = 2·(0.25+2.25+6.25+12.25) = 42, s = √6 =
		// 2.449489743; quartiles 2.75 and 6.25 as above, fences −2.5 and 11.5.
		// x = 50: z = 45.5/√6 = 18.575 and 50 > 11.5: both.
		"both": {[]float64{1, 2, 3, 4, 5, 6, 7, 8, 50}, wantStats{
			mean: 4.5, stdDev: math.Sqrt(6), z: 45.5 / math.Sqrt(6), q1: 2.75, q3: 6.25, lower: -2.5, upper: 11.5, zFlagged: true, iqrFlagged: true}},
		// x = −20: z = −24.5/√6 = −10.002 (|z| counts) and −20 < −2.5: both, below.
		"both, low": {[]float64{1, 2, 3, 4, 5, 6, 7, 8, -20}, wantStats{
			mean: 4.5, stdDev: math.Sqrt(6), z: -24.5 / math.Sqrt(6), q1: 2.75, q3: 6.25, lower: -2.5, upper: 11.5, zFlagged: true, iqrFlagged: true}},
		// x = 5: z = 0.5/√6 = 0.204, inside the fences: neither.
		"none": {[]float64{1, 2, 3, 4, 5, 6, 7, 8, 5}, wantStats{
			mean: 4.5, stdDev: math.Sqrt(6), z: 0.5 / math.Sqrt(6), q1: 2.75, q3: 6.25, lower: -2.5, upper: 11.5}},
		// z = 3 exactly is not above the threshold: baseline 0,0,0,0,10,10,10,10 has
		// s = √(200/7); x = 5 + 3s. Its fences are −15 and 25, and 5+3s = 21.04: neither.
		"z at the threshold": {[]float64{0, 0, 0, 0, 10, 10, 10, 10, 5 + 3*math.Sqrt(200.0/7)}, wantStats{
			mean: 5, stdDev: math.Sqrt(200.0 / 7), z: 3, q1: 0, q3: 10, lower: -15, upper: 25}},
		// s = 0: every baseline value is 7. z is undefined and does not fire; the
		// quartiles are 7 and 7, IQR 0, so the fences are 7 and 7 and 7 is inside.
		"s = 0, same value": {[]float64{7, 7, 7, 7, 7}, wantStats{
			mean: 7, stdDev: 0, z: math.NaN(), q1: 7, q3: 7, lower: 7, upper: 7}},
		// s = 0 and x = 8: still no z, but 8 > the upper fence 7: IQR fires.
		"s = 0, other value": {[]float64{7, 7, 7, 7, 8}, wantStats{
			mean: 7, stdDev: 0, z: math.NaN(), q1: 7, q3: 7, lower: 7, upper: 7, iqrFlagged: true}},
		// 0.1 summed 99 times is not 9.9 exactly: the spread must still be exactly 0.
		"s = 0, inexact sum": {append(repeat(0.1, 99), 0.1), wantStats{
			mean: 0.1, stdDev: 0, z: math.NaN(), q1: 0.1, q3: 0.1, lower: 0.1, upper: 0.1}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := assess("x", c.values, DefaultZThreshold)
			if d.Status != StatusOK || d.Stats == nil || d.N != len(c.values) {
				t.Fatalf("got %+v", d)
			}
			w := c.want
			st := d.Stats
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"value", st.Value, c.values[len(c.values)-1]}, {"mean", st.Mean, w.mean}, {"stddev", st.StdDev, w.stdDev},
				{"q1", st.Q1, w.q1}, {"q3", st.Q3, w.q3}, {"iqr", st.IQR, w.q3 - w.q1},
				{"lower_fence", st.LowerFence, w.lower}, {"upper_fence", st.UpperFence, w.upper}} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			switch {
			case math.IsNaN(w.z) && st.Z != nil:
				t.Errorf("z = %v, want undefined", *st.Z)
			case !math.IsNaN(w.z) && (st.Z == nil || !near(*st.Z, w.z)):
				t.Errorf("z = %v, want %v", st.Z, w.z)
			}
			if d.ZFlagged != w.zFlagged || d.IQRFlagged != w.iqrFlagged || d.Flagged != (w.zFlagged || w.iqrFlagged) {
				t.Errorf("flags z=%v iqr=%v any=%v, want z=%v iqr=%v", d.ZFlagged, d.IQRFlagged, d.Flagged, w.zFlagged, w.iqrFlagged)
			}
		})
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestAssessInsufficientData(t *testing.T) {
	for n := range MinBaseline + 1 {
		d := assess("x", repeat(1, n), DefaultZThreshold)
		if d.Status != StatusInsufficientData || d.Stats != nil || d.N != n || d.Flagged {
			t.Errorf("%d values: %+v", n, d)
		}
	}
	// One more, MinBaseline earlier values and the candidate, is enough.
	if d := assess("x", []float64{1, 2, 3, 4, 100}, DefaultZThreshold); d.Status != StatusOK || !d.Flagged {
		t.Errorf("%d values: %+v", MinBaseline+1, d)
	}
	b, err := json.Marshal(assess("latency_ms", []float64{1}, DefaultZThreshold))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"latency_ms","status":"insufficient_data","n":1,"seq":0,"z_flagged":false,"iqr_flagged":false,"flagged":false}`; string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
}

func TestQuantileLinearInterpolation(t *testing.T) {
	// NumPy's percentile, R's quantile type 7 and Excel's QUARTILE.INC all give these.
	sorted := []float64{1, 2, 4, 7, 11, 16}
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {0.25, 2.5}, {0.5, 5.5}, {0.75, 10}, {1, 16}, // 0.25: position 1.25 → 2 + 0.25·2
	} {
		if got := quantile(sorted, c.p); !near(got, c.want) {
			t.Errorf("quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

// entry makes a chain entry whose body carries attrs and lasts latencyMS.
func entry(t *testing.T, seq int64, latencyMS int64, attrs map[string]any) protocol.Entry {
	t.Helper()
	start := int64(1_795_000_000_000_000_000) + seq*1e9
	body := protocol.SpanBody{Name: "chat", Kind: "client", Attributes: attrs, StatusCode: "OK",
		StartTimeNS: start, EndTimeNS: start + latencyMS*1e6,
		TraceID: fmt.Sprintf("%032x", seq), SpanID: fmt.Sprintf("%016x", seq)}
	e, err := protocol.NewEntry([]byte(strings.Repeat("k", 32)), seq, protocol.GenesisPrevHash, body)
	if err != nil {
		t.Fatal(err)
	}
	return *e
}

func TestRegressReadsEachDimension(t *testing.T) {
	// Eight ordinary calls, then one whose output tokens (given as a string, under the
	// older name) and cost jump. Input tokens stay ordinary; one entry lacks a cost and
	// is skipped for cost alone.
	var entries []protocol.Entry
	for i := int64(1); i <= 8; i++ {
		attrs := map[string]any{AttrInputTokens: 100 + i, AttrOutputTokens: 50 + i%2, AttrCostUSD: 0.01}
		if i == 4 {
			delete(attrs, AttrCostUSD)
		}
		entries = append(entries, entry(t, i, 800+i, attrs))
	}
	entries = append(entries, entry(t, 9, 805, map[string]any{
		AttrPromptTokens: "104", AttrCompletionTokens: "5000", AttrCairnCostUSD: "0.75"}))
	run, err := Regress(entries, RegressionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Window != DefaultWindow || run.ZThreshold != DefaultZThreshold || run.EntriesConsidered != 9 ||
		run.FirstSeq != 1 || run.LastSeq != 9 || !run.Flagged {
		t.Fatalf("run %+v", run)
	}
	want := []struct {
		name    string
		n       int
		value   float64
		flagged bool
	}{
		{DimInputTokens, 9, 104, false},
		{DimOutputTokens, 9, 5000, true},
		{DimCostUSD, 8, 0.75, true}, // the baseline is 0.01 seven times: s = 0, IQR fires
		{DimLatencyMS, 9, 805, false},
	}
	for i, w := range want {
		d := run.Dimensions[i]
		if d.Name != w.name || d.N != w.n || d.Stats == nil || d.Value != w.value || d.Flagged != w.flagged || d.Seq != 9 {
			t.Errorf("dimension %d: %+v %+v, want %+v", i, d, d.Stats, w)
		}
	}
	if run.Dimensions[2].Z != nil || !run.Dimensions[2].IQRFlagged {
		t.Errorf("cost: %+v", run.Dimensions[2].Stats)
	}
}

func TestRegressUsesTheLastWindow(t *testing.T) {
	var entries []protocol.Entry
	// An outlier at seq 1, outside a window of 5: nothing is flagged.
	entries = append(entries, entry(t, 1, 1, map[string]any{AttrInputTokens: 1_000_000}))
	for i := int64(2); i <= 7; i++ {
		entries = append(entries, entry(t, i, 10, map[string]any{AttrInputTokens: 10 + i}))
	}
	run, err := Regress(entries, RegressionOptions{Window: 5, ZThreshold: 2})
	if err != nil {
		t.Fatal(err)
	}
	if run.EntriesConsidered != 5 || run.FirstSeq != 3 || run.Flagged || run.Dimensions[0].N != 5 {
		t.Fatalf("run %+v, input %+v", run, run.Dimensions[0])
	}
	if d := run.Dimensions[1]; d.Status != StatusInsufficientData || d.N != 0 || d.Seq != 0 {
		t.Errorf("output tokens: %+v", d)
	}
}

func TestRegressionOptions(t *testing.T) {
	for _, o := range []RegressionOptions{
		{Window: 4}, {Window: -1}, {Window: MaxWindow + 1}, {ZThreshold: -1}, {ZThreshold: math.NaN()}, {ZThreshold: math.Inf(1)},
	} {
		if _, err := o.Complete(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v", o, err)
		}
		if _, err := Regress(nil, o); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Regress %+v: %v", o, err)
		}
	}
	o, err := RegressionOptions{Window: 5, ZThreshold: 0.5}.Complete()
	if err != nil || o.Window != 5 || o.ZThreshold != 0.5 {
		t.Errorf("%+v, %v", o, err)
	}
	run, err := Regress(nil, RegressionOptions{})
	if err != nil || run.EntriesConsidered != 0 || run.Flagged || len(run.Dimensions) != 4 {
		t.Errorf("empty chain: %+v, %v", run, err)
	}
}

func TestRegressRefusesABodyThatIsNotJSON(t *testing.T) {
	e := entry(t, 3, 1, nil)
	e.CanonicalBody = []byte("{not json")
	if _, err := Regress([]protocol.Entry{e}, RegressionOptions{}); err == nil || !strings.Contains(err.Error(), "seq 3") {
		t.Errorf("got %v", err)
	}
}
