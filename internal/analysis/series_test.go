package analysis

import (
	"errors"
	"testing"
)

func TestSeriesBucketsBySeq(t *testing.T) {
	var entries []WindowEntry
	for seq := int64(11); seq <= 20; seq++ {
		tokens := seq
		if seq == 15 {
			tokens = 1000
		}
		entries = append(entries, entry(t, seq, 100, map[string]any{"gen_ai.usage.input_tokens": tokens}))
	}
	d := &Dimension{AnomaliesZ: []ZAnomaly{{Seq: 15, Value: 1000, Z: 3}}, AnomaliesIQR: []IQRAnomaly{{Seq: 15, Value: 1000}, {Seq: 20, Value: 20}}}
	points, err := Series(entries, DimInputTokens, 3, d)
	if err != nil {
		t.Fatal(err)
	}
	// Ten seqs in three buckets: 11-14, 15-17, 18-20.
	want := []SeriesPoint{
		{FirstSeq: 11, LastSeq: 14, N: 4, Mean: 12.5, Min: 11, Max: 14},
		{FirstSeq: 15, LastSeq: 17, N: 3, Mean: 1033.0 / 3, Min: 16, Max: 1000, AnomaliesZ: 1, AnomaliesIQR: 1},
		{FirstSeq: 18, LastSeq: 20, N: 3, Mean: 19, Min: 18, Max: 20, AnomaliesIQR: 1},
	}
	if len(points) != len(want) {
		t.Fatalf("%d points: %+v", len(points), points)
	}
	for i := range want {
		if p := points[i]; p.FirstSeq != want[i].FirstSeq || p.LastSeq != want[i].LastSeq || p.N != want[i].N || !near(p.Mean, want[i].Mean) ||
			p.Min != want[i].Min || p.Max != want[i].Max || p.AnomaliesZ != want[i].AnomaliesZ || p.AnomaliesIQR != want[i].AnomaliesIQR {
			t.Errorf("point %d: %+v, want %+v", i, p, want[i])
		}
	}
	// More points than seqs: one entry each; empty buckets are left out.
	if points, err = Series(entries[:2], DimInputTokens, 50, nil); err != nil || len(points) != 2 || points[1].FirstSeq != 12 {
		t.Errorf("50 points over 2 entries: %+v %v", points, err)
	}
	if points, err = Series(entries, DimCostUSD, 5, nil); err != nil || len(points) != 0 {
		t.Errorf("a dimension without values: %+v %v", points, err)
	}
	for _, bad := range []struct {
		dim    string
		points int
	}{{"tokens", 5}, {DimInputTokens, 0}, {DimInputTokens, MaxSeriesPoints + 1}} {
		if _, err := Series(entries, bad.dim, bad.points, nil); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Series(%q, %d): %v", bad.dim, bad.points, err)
		}
	}
}

func TestExtremes(t *testing.T) {
	d := &Dimension{LowerFence: 10, UpperFence: 20,
		AnomaliesZ:   []ZAnomaly{{Seq: 1, Z: 3.1}, {Seq: 2, Z: -5}, {Seq: 3, Z: 4}},
		AnomaliesIQR: []IQRAnomaly{{Seq: 1, Value: 25}, {Seq: 2, Value: 0}, {Seq: 3, Value: 21}}}
	z, q := d.Extremes(2)
	if len(z) != 2 || z[0].Seq != 2 || z[1].Seq != 3 || len(q) != 2 || q[0].Seq != 2 || q[1].Seq != 1 {
		t.Errorf("Extremes(2): %+v %+v", z, q)
	}
	if z, q := (&Dimension{}).Extremes(3); z == nil || q == nil {
		t.Error("Extremes of no anomalies: nil, want empty lists")
	}
	if d.AnomaliesZ[0].Seq != 1 {
		t.Error("Extremes reordered the run's list")
	}
}
