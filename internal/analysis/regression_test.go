package analysis

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// near reports whether got is want to within 1e-9, relatively.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// seriesOf numbers values from seq 1.
func seriesOf(values ...float64) *series {
	s := &series{}
	for i, v := range values {
		s.add(int64(i+1), v)
	}
	return s
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// zSeqs and iqrSeqs list the seqs of a dimension's anomalies.
func zSeqs(d *Dimension) []int64 {
	var out []int64
	for _, a := range d.AnomaliesZ {
		out = append(out, a.Seq)
	}
	return out
}

func iqrSeqs(d *Dimension) []int64 {
	var out []int64
	for _, a := range d.AnomaliesIQR {
		out = append(out, a.Seq)
	}
	return out
}

// The figures below are worked by hand over the whole window, the tested value
// included; quartiles use position (n−1)·p in the sorted values, the standard deviation
// divides by n−1.
func TestAssessExaminesEveryEntry(t *testing.T) {
	type want struct {
		mean, stdev, q1, q3 float64
		z, iqr              []int64 // the anomalies' seqs
		zOfFirst            float64 // z of the first z anomaly, when there is one
	}
	// "z only": the mean and sample standard deviation of 30 zeros, 30 tens and 24.
	zm := 324.0 / 61
	zs := math.Sqrt((30*zm*zm + 30*(10-zm)*(10-zm) + (24-zm)*(24-zm)) / 60)
	cases := map[string]struct {
		values []float64
		want   want
	}{
		// Eleven calls of 100 tokens and, at seq 6, one of 100,000: mean 101100/12 =
		// 8425, deviations −8325 (×11) and 91575, Σd² = 11·8325² + 91575² = 9148342500,
		// s = √(9148342500/11) = √831667500. z = 91575/s = 11/√12 = 3.1754, the largest
		// |z| twelve values allow, > 3. Q1 (position 2.75) and Q3 (8.25) are 100: IQR 0,
		// fences 100 and 100, and 100000 is outside.
		"planted outlier, seq 6 of 12": {append(append(repeat(100, 5), 100000), repeat(100, 6)...), want{
			mean: 8425, stdev: math.Sqrt(831667500), q1: 100, q3: 100, z: []int64{6}, iqr: []int64{6}, zOfFirst: 11 / math.Sqrt(12)}},
		// 1..12: mean 6.5, Σd² = 143, s = √13; quartiles 3.75 and 9.25, fences −4.5
		// and 17.5; the largest |z| is 5.5/√13 = 1.53: nothing.
		"clean": {[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, want{
			mean: 6.5, stdev: math.Sqrt(13), q1: 3.75, q3: 9.25}},
		// 1..11 and 20: mean 86/12 = 7.1667, Σd² = 289.67, s = 5.1316; 20 has z =
		// 12.833/5.1316 = 2.50, under 3. Q1 at 2.75: 3.75, Q3 at 8.25: 9.25, IQR 5.5,
		// upper fence 17.5 < 20: IQR only.
		"iqr only": {[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 20}, want{
			mean: 86.0 / 12, stdev: math.Sqrt((506 - 2*86.0/12*66 + 11*(86.0/12)*(86.0/12) + (20-86.0/12)*(20-86.0/12)) / 11),
			q1: 3.75, q3: 9.25, iqr: []int64{12}}},
		// 30 zeros, 30 tens and 24 (seq 61): mean 324/61 = 5.3115, Σd² =
		// 30·5.3115² + 30·4.6885² + 18.6885² = 1855.08, s = √(1855.08/60) = 5.5604, z of
		// 24 = 3.361 > 3. Q1 (position 15) 0, Q3 (45) 10, fences −15 and 25: z only.
		"z only": {append(append(repeat(0, 30), repeat(10, 30)...), 24), want{
			mean: zm, stdev: zs, q1: 0, q3: 10, z: []int64{61}, zOfFirst: (24 - zm) / zs}},
		// The same below the mean: z is negative and |z| counts.
		"low outlier": {append(append(repeat(100, 3), -99800), repeat(100, 8)...), want{
			mean: (1100 - 99800) / 12.0, stdev: math.Sqrt(831667500), q1: 100, q3: 100, z: []int64{4}, iqr: []int64{4}, zOfFirst: -11 / math.Sqrt(12)}},
		// s = 0: z is undefined and never fires; IQR 0 and every value on the fences.
		"all equal": {repeat(7, 12), want{mean: 7, q1: 7, q3: 7}},
		// 0.1 summed 99 times is not 9.9 exactly: the spread must still be exactly 0.
		"all equal, inexact sum": {repeat(0.1, 100), want{mean: 0.1, q1: 0.1, q3: 0.1}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := assess(seriesOf(c.values...), DefaultZThreshold)
			w := c.want
			if d.Status != StatusOK || d.N != len(c.values) {
				t.Fatalf("status %s, n %d", d.Status, d.N)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"mean", d.Mean, w.mean}, {"stdev", d.Stdev, w.stdev}, {"q1", d.Q1, w.q1}, {"q3", d.Q3, w.q3},
				{"iqr", d.IQR, w.q3 - w.q1}, {"lower_fence", d.LowerFence, w.q1 - 1.5*(w.q3-w.q1)},
				{"upper_fence", d.UpperFence, w.q3 + 1.5*(w.q3-w.q1)}} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if !slices.Equal(zSeqs(d), w.z) || !slices.Equal(iqrSeqs(d), w.iqr) {
				t.Errorf("anomalies z %v iqr %v, want z %v iqr %v", zSeqs(d), iqrSeqs(d), w.z, w.iqr)
			}
			if len(d.AnomaliesZ) > 0 && !near(d.AnomaliesZ[0].Z, w.zOfFirst) {
				t.Errorf("z = %v, want %v", d.AnomaliesZ[0].Z, w.zOfFirst)
			}
			for _, a := range d.AnomaliesIQR {
				if a.Value != c.values[a.Seq-1] {
					t.Errorf("iqr anomaly %+v: value of seq %d is %v", a, a.Seq, c.values[a.Seq-1])
				}
			}
			flagged := len(slices.Compact(slices.Sorted(slices.Values(append(zSeqs(d), iqrSeqs(d)...)))))
			if d.FlaggedEntries != flagged || d.Flagged != (flagged > 0) {
				t.Errorf("flagged_entries %d flagged %v, want %d", d.FlaggedEntries, d.Flagged, flagged)
			}
		})
	}
}

// z equal to the threshold does not fire: only |z| above it does.
func TestAssessZAtTheThreshold(t *testing.T) {
	d := assess(seriesOf(append(append(repeat(100, 5), 100000), repeat(100, 6)...)...), 11/math.Sqrt(12))
	if len(d.AnomaliesZ) != 0 {
		t.Errorf("z anomalies %+v at a threshold equal to z", d.AnomaliesZ)
	}
	d = assess(seriesOf(append(append(repeat(100, 5), 100000), repeat(100, 6)...)...), 3.17)
	if len(d.AnomaliesZ) != 1 {
		t.Errorf("z anomalies %+v at threshold 3.17", d.AnomaliesZ)
	}
}

func TestAssessInsufficientData(t *testing.T) {
	for n := range MinValues {
		d := assess(seriesOf(repeat(1, n)...), DefaultZThreshold)
		if d.Status != StatusInsufficientData || d.N != n || d.Flagged || d.AnomaliesZ == nil || d.AnomaliesIQR == nil ||
			len(d.AnomaliesZ)+len(d.AnomaliesIQR) != 0 || (n > 0 && d.Mean != 1) {
			t.Errorf("%d values: %+v", n, d)
		}
	}
	// Four values: mean and stdev are given, nothing is tested.
	if d := assess(seriesOf(1, 2, 3, 1000), DefaultZThreshold); d.Status != StatusInsufficientData || d.Mean != 251.5 ||
		!near(d.Stdev, math.Sqrt((250.5*250.5+249.5*249.5+248.5*248.5+748.5*748.5)/3)) || d.Flagged {
		t.Errorf("4 values: %+v", d)
	}
	// MinValues values are enough.
	if d := assess(seriesOf(1, 2, 3, 4, 1000), DefaultZThreshold); d.Status != StatusOK || !d.Flagged {
		t.Errorf("%d values: %+v", MinValues, d)
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

func TestFlaggedSeqs(t *testing.T) {
	for name, c := range map[string]struct {
		z, iqr []int64
		want   []int64
	}{
		"none":      {nil, nil, []int64{}},
		"z only":    {[]int64{3, 9}, nil, []int64{3, 9}},
		"iqr only":  {nil, []int64{2}, []int64{2}},
		"merged":    {[]int64{1, 5, 9}, []int64{2, 5, 10}, []int64{1, 2, 5, 9, 10}},
		"both same": {[]int64{4, 6}, []int64{4, 6}, []int64{4, 6}},
	} {
		d := &Dimension{}
		for _, s := range c.z {
			d.AnomaliesZ = append(d.AnomaliesZ, ZAnomaly{Seq: s})
		}
		for _, s := range c.iqr {
			d.AnomaliesIQR = append(d.AnomaliesIQR, IQRAnomaly{Seq: s})
		}
		if got := d.FlaggedSeqs(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

func TestCostOf(t *testing.T) {
	for name, c := range map[string]struct {
		attrs map[string]any
		want  float64
		ok    bool
	}{
		// (100·0.003 + 50·0.015)/1000 = 0.00105
		"priced model": {map[string]any{AttrRequestModel: "claude-sonnet-4", AttrInputTokens: 100, AttrOutputTokens: 50}, 0.00105, true},
		"provider prefix and case": {map[string]any{AttrRequestModel: "anthropic/Claude-Opus-4-7", AttrInputTokens: 1000, AttrOutputTokens: 1000},
			0.015 + 0.075, true},
		"recorded cost wins":     {map[string]any{AttrRequestModel: "claude-sonnet-4", AttrInputTokens: 100, AttrOutputTokens: 50, AttrCostUSD: 2}, 2, true},
		"recorded, unpriced":     {map[string]any{AttrRequestModel: "gpt-4o", AttrCairnCostUSD: "0.5"}, 0.5, true},
		"no price":               {map[string]any{AttrRequestModel: "gpt-4o", AttrInputTokens: 100, AttrOutputTokens: 50}, 0, false},
		"no price for a variant": {map[string]any{AttrRequestModel: "claude-sonnet-4-9", AttrInputTokens: 100, AttrOutputTokens: 50}, 0, false},
		"no output tokens":       {map[string]any{AttrRequestModel: "claude-sonnet-4", AttrInputTokens: 100}, 0, false},
		"no model":               {map[string]any{AttrInputTokens: 100, AttrOutputTokens: 50}, 0, false},
	} {
		f := FactsOf(&protocol.SpanBody{Attributes: c.attrs})
		if got, ok := CostOf(&f); ok != c.ok || !near(got, c.want) {
			t.Errorf("%s: %v %v, want %v %v", name, got, ok, c.want, c.ok)
		}
	}
}

// entry makes a window entry whose body carries attrs and lasts latencyMS.
func entry(t *testing.T, seq int64, latencyMS int64, attrs map[string]any) WindowEntry {
	t.Helper()
	start := int64(1_795_000_000_000_000_000) + seq*1e9
	body := protocol.SpanBody{Name: "chat", Kind: "client", Attributes: attrs, StatusCode: "OK",
		StartTimeNS: start, EndTimeNS: start + latencyMS*1e6,
		TraceID: fmt.Sprintf("%032x", seq), SpanID: fmt.Sprintf("%016x", seq)}
	e, err := protocol.NewEntry([]byte(strings.Repeat("k", 32)), seq, protocol.GenesisPrevHash, body)
	if err != nil {
		t.Fatal(err)
	}
	return WindowEntry{Seq: e.Seq, Body: e.CanonicalBody}
}

// TestRegressPlantedOutlier is the documented example: twelve calls alternating two
// models, about 100 input tokens each, and 100,000 at seq 6. It is reported by both
// tests with its seq, on input tokens and (claude-sonnet-4 having a price) on cost.
func TestRegressPlantedOutlier(t *testing.T) {
	var entries []WindowEntry
	for seq := int64(1); seq <= 12; seq++ {
		model, in := "gpt-4o", 100+seq%7
		if seq%2 == 0 {
			model = "claude-sonnet-4"
		}
		if seq == 6 {
			in = 100_000
		}
		entries = append(entries, entry(t, seq, 400+seq*15, map[string]any{AttrRequestModel: model, AttrInputTokens: in, AttrOutputTokens: 50 + seq%5}))
	}
	run, err := Regress(entries, RegressionOptions{Window: 12, ZThreshold: 3})
	if err != nil {
		t.Fatal(err)
	}
	if run.EntriesConsidered != 12 || run.FirstSeq != 1 || run.LastSeq != 12 || len(run.Dimensions) != 4 || !run.Flagged || run.TotalAnomalies != 2 {
		t.Fatalf("run %+v", run)
	}
	in := run.Dimensions[DimInputTokens]
	if !slices.Equal(zSeqs(in), []int64{6}) || !slices.Equal(iqrSeqs(in), []int64{6}) || in.AnomaliesZ[0].Value != 100_000 ||
		!(in.AnomaliesZ[0].Z > 3 && in.AnomaliesZ[0].Z <= 11/math.Sqrt(12)) {
		t.Errorf("input tokens: %+v", in)
	}
	cost := run.Dimensions[DimCostUSD]
	if cost.N != 6 || !slices.Equal(iqrSeqs(cost), []int64{6}) || len(cost.AnomaliesZ) != 0 {
		// Six costs: no |z| can exceed 5/√6 = 2.04, so only the IQR test can fire.
		t.Errorf("cost: %+v", cost)
	}
	for _, name := range []string{DimOutputTokens, DimLatencyMS} {
		if d := run.Dimensions[name]; d.Status != StatusOK || d.Flagged {
			t.Errorf("%s: %+v", name, d)
		}
	}
	if got := run.FlaggedDimensions(); !slices.Equal(got, []string{DimInputTokens, DimCostUSD}) {
		t.Errorf("flagged dimensions %v", got)
	}
}

func TestRegressReadsEachDimension(t *testing.T) {
	// Eight calls; output tokens come as strings under the older name at seq 9, costs as
	// recorded; seq 4 lacks a cost and is skipped for cost alone.
	var entries []WindowEntry
	for i := int64(1); i <= 8; i++ {
		attrs := map[string]any{AttrInputTokens: 100 + i, AttrOutputTokens: 50 + i%2, AttrCostUSD: 0.01}
		if i == 4 {
			delete(attrs, AttrCostUSD)
		}
		entries = append(entries, entry(t, i, 800+i, attrs))
	}
	entries = append(entries, entry(t, 9, 805, map[string]any{AttrPromptTokens: "104", AttrCompletionTokens: "5000", AttrCairnCostUSD: "0.75"}))
	run, err := Regress(entries, RegressionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Window != DefaultWindow || run.ZThreshold != DefaultZThreshold || run.MinValues != MinValues || run.EntriesConsidered != 9 {
		t.Fatalf("run %+v", run)
	}
	for name, w := range map[string]struct {
		n   int
		iqr []int64
	}{
		DimInputTokens:  {9, nil},
		DimOutputTokens: {9, []int64{9}},
		DimCostUSD:      {8, []int64{9}}, // seven costs of 0.01: IQR 0, and 0.75 is outside
		DimLatencyMS:    {9, nil},
	} {
		if d := run.Dimensions[name]; d.N != w.n || !slices.Equal(iqrSeqs(d), w.iqr) {
			t.Errorf("%s: %+v, want n %d iqr %v", name, d, w.n, w.iqr)
		}
	}
}

func TestRegressUsesTheLastWindow(t *testing.T) {
	// An outlier at seq 1, outside a window of 6: nothing is flagged.
	entries := []WindowEntry{entry(t, 1, 1, map[string]any{AttrInputTokens: 1_000_000})}
	for i := int64(2); i <= 7; i++ {
		entries = append(entries, entry(t, i, 10, map[string]any{AttrInputTokens: 10 + i}))
	}
	run, err := Regress(entries, RegressionOptions{Window: 6})
	if err != nil {
		t.Fatal(err)
	}
	if run.EntriesConsidered != 6 || run.FirstSeq != 2 || run.Flagged || run.Dimensions[DimInputTokens].N != 6 {
		t.Fatalf("run %+v, input %+v", run, run.Dimensions[DimInputTokens])
	}
	if d := run.Dimensions[DimOutputTokens]; d.Status != StatusInsufficientData || d.N != 0 {
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
	o, err := RegressionOptions{Window: MinWindow, ZThreshold: 0.5}.Complete()
	if err != nil || o.Window != MinWindow || o.ZThreshold != 0.5 {
		t.Errorf("%+v, %v", o, err)
	}
	run, err := Regress(nil, RegressionOptions{})
	if err != nil || run.EntriesConsidered != 0 || run.Flagged || len(run.Dimensions) != 4 {
		t.Errorf("empty chain: %+v, %v", run, err)
	}
}

func TestRegressRefusesABodyThatIsNotJSON(t *testing.T) {
	e := entry(t, 3, 1, nil)
	e.Body = []byte("{not json")
	if _, err := Regress([]WindowEntry{e}, RegressionOptions{}); err == nil || !strings.Contains(err.Error(), "seq 3") {
		t.Errorf("got %v", err)
	}
}

// TestReadWindowInParts: a large window, read in parts, gives the values in seq order
// as one pass does, and the error of the oldest broken entry.
func TestReadWindowInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	entries := make([]WindowEntry, 3*minPart+7)
	for i := range entries {
		seq := int64(i + 1)
		attrs := map[string]any{AttrInputTokens: seq % 97, AttrRequestModel: "claude-sonnet-4"}
		if seq%3 != 0 {
			attrs[AttrOutputTokens] = seq % 89
		}
		entries[i] = entry(t, seq, seq%500, attrs)
	}
	var want readings
	if err := want.read(entries); err != nil {
		t.Fatal(err)
	}
	got, err := readWindow(entries)
	if err != nil || !reflect.DeepEqual(*got, want) || len(got.cost.seqs) != 2*minPart+5 {
		t.Fatalf("read in parts differs (%v): %d input values, want %d", err, len(got.in.seqs), len(want.in.seqs))
	}
	entries[2*minPart+3].Body = []byte("{")
	entries[3*minPart].Body = []byte("[")
	if _, err := readWindow(entries); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("seq %d:", 2*minPart+4)) {
		t.Errorf("got %v", err)
	}
}
