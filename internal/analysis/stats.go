package analysis

import (
	"math"
	"slices"
)

// summary is what the regression tests need to know of a dimension's values.
type summary struct {
	mean, stdDev float64 // stdDev is the sample standard deviation (n−1)
	q1, q3, iqr  float64
	allEqual     bool // every value is the same: the spread is exactly 0
}

// summarize describes xs, which must hold at least two values. xs is not modified.
func summarize(xs []float64) summary {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s := summary{allEqual: sorted[0] == sorted[len(sorted)-1]}
	if s.allEqual {
		// Summing n copies of a value need not give n times it exactly; the spread is 0.
		s.mean = sorted[0]
	} else {
		s.mean = mean(xs)
		s.stdDev = sampleStdDev(xs, s.mean)
	}
	s.q1, s.q3 = quantile(sorted, 0.25), quantile(sorted, 0.75)
	s.iqr = s.q3 - s.q1
	return s
}

// mean is the arithmetic mean of xs, which must not be empty.
func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// sampleStdDev is the sample standard deviation of xs around their mean m, dividing by
// n−1 (Bessel's correction). xs must hold at least two values. Summing squared
// deviations from the mean (two passes) avoids the cancellation of Σx² − n·m².
func sampleStdDev(xs []float64, m float64) float64 {
	var ss float64
	for _, x := range xs {
		d := x - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// quantile is the p-quantile of sorted (ascending, not empty) by linear interpolation
// between closest ranks: the value at position (n−1)·p, counting from 0. This is
// Hyndman and Fan's type 7, the default of NumPy's percentile and R's quantile, and
// Excel's QUARTILE.INC.
func quantile(sorted []float64, p float64) float64 {
	pos := float64(len(sorted)-1) * p
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}
