package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// MaxSeriesPoints bounds the points a Series is cut into.
const MaxSeriesPoints = 1000

// SeriesPoint is one bucket of a dimension's values: the window's entries from FirstSeq
// to LastSeq that carry the dimension, summarized.
type SeriesPoint struct {
	// FirstSeq and LastSeq are the first and last entries of the bucket that carry the
	// dimension.
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
	// N is how many entries the bucket summarizes; Mean, Min and Max are their values'.
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// AnomaliesZ and AnomaliesIQR count the bucket's entries that each test flagged.
	AnomaliesZ   int `json:"anomalies_z"`
	AnomaliesIQR int `json:"anomalies_iqr"`
}

// Series cuts the values of dimension dim in entries (oldest first, as a run reads
// them) into at most points buckets of equal seq ranges over entries' first to last
// seq, and counts in each bucket the anomalies of d (a run's test of the same
// dimension over the same entries; nil counts none). Buckets without a value are left
// out, so a chart of the result reads at most points values whatever the window's size.
// It fails on an unknown dimension, a points outside 1 to MaxSeriesPoints (both wrap
// ErrInvalidInput) and on a body that is not JSON.
func Series(entries []WindowEntry, dim string, points int, d *Dimension) ([]SeriesPoint, error) {
	if points < 1 || points > MaxSeriesPoints {
		return nil, fmt.Errorf("%w: points %d: want 1 to %d", ErrInvalidInput, points, MaxSeriesPoints)
	}
	if !slices.Contains(Dimensions, dim) {
		return nil, fmt.Errorf("%w: dimension %q: want one of %v", ErrInvalidInput, dim, Dimensions)
	}
	if len(entries) == 0 {
		return []SeriesPoint{}, nil
	}
	r, err := readWindow(entries)
	if err != nil {
		return nil, err
	}
	s := map[string]*series{DimInputTokens: &r.in, DimOutputTokens: &r.out, DimCostUSD: &r.cost, DimLatencyMS: &r.latency}[dim]
	first, span := entries[0].Seq, entries[len(entries)-1].Seq-entries[0].Seq+1
	bucket := func(seq int64) int { return int((seq - first) * int64(points) / span) }
	out := make([]SeriesPoint, points)
	for i, seq := range s.seqs {
		p, v := &out[bucket(seq)], s.values[i]
		if p.N == 0 {
			p.FirstSeq, p.Min, p.Max = seq, v, v
		}
		p.LastSeq, p.N, p.Mean = seq, p.N+1, p.Mean+v // Mean holds the sum until the end
		p.Min, p.Max = math.Min(p.Min, v), math.Max(p.Max, v)
	}
	if d != nil {
		for _, a := range d.AnomaliesZ {
			if a.Seq >= first && a.Seq < first+span {
				out[bucket(a.Seq)].AnomaliesZ++
			}
		}
		for _, a := range d.AnomaliesIQR {
			if a.Seq >= first && a.Seq < first+span {
				out[bucket(a.Seq)].AnomaliesIQR++
			}
		}
	}
	for i := range out {
		out[i].Mean /= float64(max(out[i].N, 1))
	}
	return slices.DeleteFunc(out, func(p SeriesPoint) bool { return p.N == 0 }), nil
}

// Extremes returns at most n of d's anomalies of each test (never nil), the farthest out first: by
// |z| for the z-test, by the distance beyond the nearer fence for the IQR test. d is not
// changed.
func (d *Dimension) Extremes(n int) ([]ZAnomaly, []IQRAnomaly) {
	z := slices.SortedStableFunc(slices.Values(d.AnomaliesZ), func(a, b ZAnomaly) int {
		return cmp.Compare(math.Abs(b.Z), math.Abs(a.Z))
	})
	beyond := func(v float64) float64 { return math.Max(d.LowerFence-v, v-d.UpperFence) }
	q := slices.SortedStableFunc(slices.Values(d.AnomaliesIQR), func(a, b IQRAnomaly) int {
		return cmp.Compare(beyond(b.Value), beyond(a.Value))
	})
	// Never nil, so that JSON gives empty lists, as for the run's own.
	return append([]ZAnomaly{}, z[:min(n, len(z))]...), append([]IQRAnomaly{}, q[:min(n, len(q))]...)
}
