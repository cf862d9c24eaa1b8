package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

// ErrInvalidInput marks an error in what a caller asked for (options, a request body), as
// opposed to a failure to compute or store: an HTTP layer answers it with 400.
var ErrInvalidInput = errors.New("invalid input")

// Regression defaults and limits.
const (
	// DefaultWindow is how many of the chain's last entries a run looks at.
	DefaultWindow = 100
	// DefaultZThreshold is the |z| above which the z-score test fires.
	DefaultZThreshold = 3.0
	// MinValues is the fewest values a dimension needs in the window to be tested; with
	// fewer it reports StatusInsufficientData and no anomalies.
	MinValues = 5
	// MinWindow and MaxWindow bound Window.
	MinWindow = MinValues
	MaxWindow = 100_000
	// IQRFactor sets Tukey's fences: Q1 − 1.5·IQR and Q3 + 1.5·IQR.
	IQRFactor = 1.5
)

// The dimensions a run tests; SpanFacts and CostOf say where each value comes from.
const (
	DimInputTokens  = "input_tokens"
	DimOutputTokens = "output_tokens"
	DimCostUSD      = "cost_usd"
	DimLatencyMS    = "latency_ms"
)

// Dimensions lists the dimensions a run tests.
var Dimensions = []string{DimInputTokens, DimOutputTokens, DimCostUSD, DimLatencyMS}

// Dimension statuses.
const (
	// StatusOK: the dimension was tested.
	StatusOK = "ok"
	// StatusInsufficientData: the window holds fewer than MinValues values of the
	// dimension, and nothing was tested.
	StatusInsufficientData = "insufficient_data"
)

// RegressionOptions choose how a run tests. The zero value selects the defaults.
type RegressionOptions struct {
	// Window is how many of the chain's last entries are read (DefaultWindow when 0).
	Window int `json:"window"`
	// ZThreshold is the |z| above which the z-score test fires (DefaultZThreshold when 0).
	ZThreshold float64 `json:"z_threshold"`
}

// Complete returns o with the defaults filled in, or an error wrapping ErrInvalidInput
// when a value is out of range: Window must be from MinWindow to MaxWindow, and
// ZThreshold finite and positive.
func (o RegressionOptions) Complete() (RegressionOptions, error) {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.ZThreshold == 0 {
		o.ZThreshold = DefaultZThreshold
	}
	if o.Window < MinWindow || o.Window > MaxWindow {
		return o, fmt.Errorf("%w: window %d: want %d to %d entries", ErrInvalidInput, o.Window, MinWindow, MaxWindow)
	}
	if !(o.ZThreshold > 0) || math.IsInf(o.ZThreshold, 0) {
		return o, fmt.Errorf("%w: z_threshold %v: want a positive number", ErrInvalidInput, o.ZThreshold)
	}
	return o, nil
}

// Run is the result of one regression run.
type Run struct {
	// ID numbers the run where it is stored; 0 until then.
	ID int64 `json:"id"`
	// RanAt is when the run began, in UTC.
	RanAt time.Time `json:"ran_at"`
	// Window and ZThreshold are the options the run used; MinValues the constant.
	Window     int     `json:"window"`
	ZThreshold float64 `json:"z_threshold"`
	MinValues  int     `json:"min_values"`
	// EntriesConsidered is how many entries were read: at most Window. FirstSeq and
	// LastSeq are the first and last of them (0 when the chain is empty).
	EntriesConsidered int   `json:"entries_considered"`
	FirstSeq          int64 `json:"first_seq"`
	LastSeq           int64 `json:"last_seq"`
	// Dimensions holds one result per name of Dimensions.
	Dimensions map[string]*Dimension `json:"dimensions"`
	// TotalAnomalies counts the anomalies of all dimensions: an entry flagged on one
	// dimension counts once, whichever tests fired (the sum of FlaggedEntries).
	TotalAnomalies int `json:"total_anomalies"`
	// Flagged is true when any dimension is.
	Flagged bool `json:"flagged"`
}

// FlaggedDimensions returns the names of the flagged dimensions, in the order of
// Dimensions.
func (r *Run) FlaggedDimensions() []string {
	var names []string
	for _, name := range Dimensions {
		if d := r.Dimensions[name]; d != nil && d.Flagged {
			names = append(names, name)
		}
	}
	return names
}

// Dimension is the test of one dimension over the window: every value is tested against
// the mean, standard deviation and quartiles of all the window's values of the
// dimension, its own included.
type Dimension struct {
	// Mean and Stdev (the sample standard deviation, dividing by n−1) are those of the
	// window's values; 0 when there are too few (none, or one for Stdev).
	Mean  float64 `json:"mean"`
	Stdev float64 `json:"stdev"`
	// AnomaliesZ lists the entries whose |z| exceeds the run's ZThreshold, and
	// AnomaliesIQR those outside the fences, in seq order; empty when untested.
	AnomaliesZ   []ZAnomaly   `json:"anomalies_z"`
	AnomaliesIQR []IQRAnomaly `json:"anomalies_iqr"`

	// Status is one of the Status constants.
	Status string `json:"status"`
	// N is how many entries of the window carry the dimension.
	N int `json:"n"`
	// Q1 and Q3 are the quartiles by linear interpolation (see quantile), IQR = Q3 − Q1,
	// and the fences are Q1 − 1.5·IQR and Q3 + 1.5·IQR; all 0 when untested.
	Q1         float64 `json:"q1"`
	Q3         float64 `json:"q3"`
	IQR        float64 `json:"iqr"`
	LowerFence float64 `json:"lower_fence"`
	UpperFence float64 `json:"upper_fence"`
	// FlaggedEntries counts the entries either test flagged; Flagged is FlaggedEntries > 0.
	FlaggedEntries int  `json:"flagged_entries"`
	Flagged        bool `json:"flagged"`
}

// FlaggedSeqs returns the seqs either test flagged, ascending, each once.
func (d *Dimension) FlaggedSeqs() []int64 {
	seqs := make([]int64, 0, d.FlaggedEntries)
	z, q := d.AnomaliesZ, d.AnomaliesIQR
	for len(z) > 0 || len(q) > 0 { // both lists are in seq order: merge them
		switch {
		case len(q) == 0 || (len(z) > 0 && z[0].Seq < q[0].Seq):
			seqs, z = append(seqs, z[0].Seq), z[1:]
		case len(z) == 0 || q[0].Seq < z[0].Seq:
			seqs, q = append(seqs, q[0].Seq), q[1:]
		default: // the same entry in both
			seqs, z, q = append(seqs, z[0].Seq), z[1:], q[1:]
		}
	}
	return seqs
}

// ZAnomaly is an entry whose value lies more than the threshold from the mean, in
// standard deviations.
type ZAnomaly struct {
	Seq   int64   `json:"seq"`
	Value float64 `json:"value"`
	Z     float64 `json:"z"`
}

// IQRAnomaly is an entry whose value lies outside Tukey's fences.
type IQRAnomaly struct {
	Seq   int64   `json:"seq"`
	Value float64 `json:"value"`
}

// WindowEntry is what a run reads of one chain entry: its seq and canonical body.
type WindowEntry struct {
	Seq  int64
	Body []byte
}

// series is the values of one dimension in the window, with the seq of each.
type series struct {
	seqs   []int64
	values []float64
}

func (s *series) add(seq int64, v float64) {
	s.seqs = append(s.seqs, seq)
	s.values = append(s.values, v)
}

// Regress tests every entry of the window, on every dimension, with both tests: the
// z-score (|z| > ZThreshold, z from the mean and sample standard deviation of the
// window's values) and Tukey's IQR fences (quartiles by linear interpolation). entries
// are oldest first; when there are more than the window, the last Window are used. An
// entry lacking a dimension (see SpanFacts and CostOf) is skipped for that dimension
// alone, and a dimension with fewer than MinValues values is not tested.
//
// The mean, standard deviation and quartiles include the values they test: an outlier
// pulls the mean towards it and widens the deviation, so with n values no |z| can exceed
// (n−1)/√n (3.18 for 12 values). The IQR test, whose quartiles barely move, is the
// robust one of the two.
//
// It takes time linear in the window, plus one sort per dimension. The returned Run has
// neither ID nor RanAt. Regress fails on invalid options (ErrInvalidInput) and on an
// entry whose body is not JSON.
func Regress(entries []WindowEntry, opts RegressionOptions) (*Run, error) {
	opts, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	if len(entries) > opts.Window {
		entries = entries[len(entries)-opts.Window:]
	}
	run := &Run{Window: opts.Window, ZThreshold: opts.ZThreshold, MinValues: MinValues, EntriesConsidered: len(entries),
		Dimensions: make(map[string]*Dimension, len(Dimensions))}
	if len(entries) > 0 {
		run.FirstSeq, run.LastSeq = entries[0].Seq, entries[len(entries)-1].Seq
	}
	r, err := readWindow(entries)
	if err != nil {
		return nil, err
	}
	for name, s := range map[string]*series{DimInputTokens: &r.in, DimOutputTokens: &r.out, DimCostUSD: &r.cost, DimLatencyMS: &r.latency} {
		d := assess(s, opts.ZThreshold)
		run.Dimensions[name] = d
		run.TotalAnomalies += d.FlaggedEntries
		run.Flagged = run.Flagged || d.Flagged
	}
	return run, nil
}

// minPart is the fewest entries readWindow gives a goroutine of its own.
const minPart = 2000

// readings are the values of the four dimensions in some entries.
type readings struct{ in, out, cost, latency series }

// read appends the values of entries, oldest first.
func (r *readings) read(entries []WindowEntry) error {
	attrs := make(map[string]any, len(regressionAttrs))
	for _, e := range entries {
		f, err := windowFacts(e.Body, attrs)
		if err != nil {
			return fmt.Errorf("regression: entry seq %d: %w", e.Seq, err)
		}
		if f.HasInputTokens {
			r.in.add(e.Seq, float64(f.InputTokens))
		}
		if f.HasOutputTokens {
			r.out.add(e.Seq, float64(f.OutputTokens))
		}
		if c, ok := CostOf(&f); ok {
			r.cost.add(e.Seq, c)
		}
		if f.HasLatency {
			r.latency.add(e.Seq, f.LatencyMS)
		}
	}
	return nil
}

// readWindow reads the values of entries. Decoding the bodies is most of a run's time,
// so a large window is read in parts, one goroutine each, joined in seq order; the
// error of the oldest part failing is returned.
func readWindow(entries []WindowEntry) (*readings, error) {
	parts := min(runtime.GOMAXPROCS(0), len(entries)/minPart)
	if parts <= 1 {
		r := &readings{}
		return r, r.read(entries)
	}
	rs, errs := make([]readings, parts), make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		part := entries[p*len(entries)/parts : (p+1)*len(entries)/parts]
		wg.Go(func() { errs[p] = rs[p].read(part) })
	}
	wg.Wait()
	r := &rs[0]
	for p := range parts {
		if errs[p] != nil {
			return nil, errs[p]
		}
		if p > 0 {
			for _, d := range [...]struct{ to, from *series }{{&r.in, &rs[p].in}, {&r.out, &rs[p].out}, {&r.cost, &rs[p].cost}, {&r.latency, &rs[p].latency}} {
				d.to.seqs, d.to.values = append(d.to.seqs, d.from.seqs...), append(d.to.values, d.from.values...)
			}
		}
	}
	return r, nil
}

// assess tests every value of s against the figures of all of them.
func assess(s *series, zThreshold float64) *Dimension {
	n := len(s.values)
	d := &Dimension{Status: StatusInsufficientData, N: n, AnomaliesZ: []ZAnomaly{}, AnomaliesIQR: []IQRAnomaly{}}
	if n == 0 {
		return d
	}
	if n < MinValues {
		d.Mean = mean(s.values)
		if n > 1 {
			d.Stdev = sampleStdDev(s.values, d.Mean)
		}
		return d
	}
	sum := summarize(s.values)
	d.Status, d.Mean, d.Stdev = StatusOK, sum.mean, sum.stdDev
	d.Q1, d.Q3, d.IQR = sum.q1, sum.q3, sum.iqr
	d.LowerFence, d.UpperFence = sum.q1-IQRFactor*sum.iqr, sum.q3+IQRFactor*sum.iqr
	for i, x := range s.values {
		flagged := false
		// With a spread of 0, z is undefined and the z-test does not fire.
		if !sum.allEqual && sum.stdDev > 0 {
			if z := (x - sum.mean) / sum.stdDev; math.Abs(z) > zThreshold {
				d.AnomaliesZ = append(d.AnomaliesZ, ZAnomaly{Seq: s.seqs[i], Value: x, Z: z})
				flagged = true
			}
		}
		if x < d.LowerFence || x > d.UpperFence {
			d.AnomaliesIQR = append(d.AnomaliesIQR, IQRAnomaly{Seq: s.seqs[i], Value: x})
			flagged = true
		}
		if flagged {
			d.FlaggedEntries++
		}
	}
	d.Flagged = d.FlaggedEntries > 0
	return d
}

// WindowReader reads a regression window; *store.Store implements it.
type WindowReader interface {
	// RegressionWindow returns the seq and body of the last n entries of the chain,
	// oldest first, reading nothing else.
	RegressionWindow(ctx context.Context, n int) ([]WindowEntry, error)
}

// Chain is what RunRegression needs of a chain store; *store.Store implements it.
type Chain interface {
	WindowReader
	// SaveRegression stores run and sets its ID.
	SaveRegression(ctx context.Context, run *Run) error
}

// RegressWindow reads the chain's last opts.Window entries and tests them with Regress,
// saving nothing; the run has RanAt but no ID. Invalid options fail with an error
// wrapping ErrInvalidInput, before anything is read.
func RegressWindow(ctx context.Context, chain WindowReader, opts RegressionOptions) (*Run, error) {
	opts, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	ranAt := time.Now().UTC()
	entries, err := chain.RegressionWindow(ctx, opts.Window)
	if err != nil {
		return nil, fmt.Errorf("regression: %w", err)
	}
	run, err := Regress(entries, opts)
	if err != nil {
		return nil, err
	}
	run.RanAt = ranAt
	return run, nil
}

// RunRegression is RegressWindow, then stores the run in the chain's database, which
// sets its ID.
func RunRegression(ctx context.Context, chain Chain, opts RegressionOptions) (*Run, error) {
	run, err := RegressWindow(ctx, chain, opts)
	if err != nil {
		return nil, err
	}
	if err := chain.SaveRegression(ctx, run); err != nil {
		return nil, fmt.Errorf("regression: %w", err)
	}
	return run, nil
}
