package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
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
	// MinBaseline is the fewest earlier values a dimension needs to be tested; with
	// fewer it reports StatusInsufficientData.
	MinBaseline = 4
	// MaxWindow bounds Window.
	MaxWindow = 100_000
	// IQRFactor sets Tukey's fences: Q1 − 1.5·IQR and Q3 + 1.5·IQR.
	IQRFactor = 1.5
)

// The dimensions a run tests, in the order a Run lists them; SpanFacts says where each
// value comes from.
const (
	DimInputTokens  = "input_tokens"
	DimOutputTokens = "output_tokens"
	DimCostUSD      = "cost_usd"
	DimLatencyMS    = "latency_ms"
)

// Dimension statuses.
const (
	// StatusOK: the dimension was tested.
	StatusOK = "ok"
	// StatusInsufficientData: the window holds fewer than MinBaseline values besides
	// the newest, and nothing was tested.
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
// when a value is out of range: Window must be from MinBaseline+1 to MaxWindow, and
// ZThreshold finite and positive.
func (o RegressionOptions) Complete() (RegressionOptions, error) {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.ZThreshold == 0 {
		o.ZThreshold = DefaultZThreshold
	}
	if o.Window < MinBaseline+1 || o.Window > MaxWindow {
		return o, fmt.Errorf("%w: window %d: want %d to %d entries", ErrInvalidInput, o.Window, MinBaseline+1, MaxWindow)
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
	// StartedAt is when the run began, in UTC.
	StartedAt time.Time `json:"started_at"`
	// Window and ZThreshold are the options the run used; MinBaseline the constant.
	Window      int     `json:"window"`
	ZThreshold  float64 `json:"z_threshold"`
	MinBaseline int     `json:"min_baseline"`
	// EntriesConsidered is how many entries were read: at most Window. FirstSeq and
	// LastSeq are the first and last of them (0 when the chain is empty).
	EntriesConsidered int   `json:"entries_considered"`
	FirstSeq          int64 `json:"first_seq"`
	LastSeq           int64 `json:"last_seq"`
	// Dimensions holds one result per dimension, in the order of the Dim constants.
	Dimensions []Dimension `json:"dimensions"`
	// Flagged is true when any dimension is.
	Flagged bool `json:"flagged"`
}

// Dimension is the test of one dimension: is the newest value (the candidate) an
// outlier against the earlier values of the window (the baseline)?
type Dimension struct {
	// Name is one of the Dim constants; Status one of the Status constants.
	Name   string `json:"name"`
	Status string `json:"status"`
	// N is how many entries of the window carry the dimension: the baseline and the
	// candidate.
	N int `json:"n"`
	// Seq is the candidate's entry; 0 when the window holds no value.
	Seq int64 `json:"seq"`
	// Stats is absent (nil) unless Status is StatusOK.
	*Stats
	// ZFlagged: |z| > the run's ZThreshold. IQRFlagged: the value is outside the fences.
	// Flagged: either.
	ZFlagged   bool `json:"z_flagged"`
	IQRFlagged bool `json:"iqr_flagged"`
	Flagged    bool `json:"flagged"`
}

// Stats are the figures of a tested dimension. Mean, StdDev and the quartiles describe
// the baseline, which excludes the candidate.
type Stats struct {
	// Value is the candidate.
	Value float64 `json:"value"`
	Mean  float64 `json:"mean"`
	// StdDev is the baseline's sample standard deviation (dividing by n−1).
	StdDev float64 `json:"stddev"`
	// Z is (Value − Mean) / StdDev; nil when StdDev is 0, as z is then undefined and the
	// z-score test does not fire (the IQR test still may).
	Z *float64 `json:"z"`
	// Q1 and Q3 are the baseline's quartiles by linear interpolation (see quantile),
	// IQR = Q3 − Q1, and the fences are Q1 − 1.5·IQR and Q3 + 1.5·IQR.
	Q1         float64 `json:"q1"`
	Q3         float64 `json:"q3"`
	IQR        float64 `json:"iqr"`
	LowerFence float64 `json:"lower_fence"`
	UpperFence float64 `json:"upper_fence"`
}

// Regress tests the newest value of each dimension against the earlier values of
// entries (oldest first; when there are more than the window, the last Window are used).
// An entry lacking a dimension is skipped for that dimension alone. This is the usual
// drift-detection question, "is the latest call an outlier against the recent window";
// a dimension with fewer than MinBaseline earlier values reports StatusInsufficientData.
//
// The returned Run has neither ID nor StartedAt. Regress fails on invalid options
// (ErrInvalidInput) and on an entry whose body is not JSON.
func Regress(entries []protocol.Entry, opts RegressionOptions) (*Run, error) {
	opts, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	if len(entries) > opts.Window {
		entries = entries[len(entries)-opts.Window:]
	}
	run := &Run{Window: opts.Window, ZThreshold: opts.ZThreshold, MinBaseline: MinBaseline, EntriesConsidered: len(entries)}
	if len(entries) > 0 {
		run.FirstSeq, run.LastSeq = entries[0].Seq, entries[len(entries)-1].Seq
	}
	names := [...]string{DimInputTokens, DimOutputTokens, DimCostUSD, DimLatencyMS}
	var values [len(names)][]float64
	var seqs [len(names)]int64 // the seq of each dimension's newest value
	for i := range entries {
		body, err := DecodeBody(entries[i].CanonicalBody)
		if err != nil {
			return nil, fmt.Errorf("regression: entry seq %d: %w", entries[i].Seq, err)
		}
		f := FactsOf(&body)
		for d, v := range [...]struct {
			value float64
			ok    bool
		}{{float64(f.InputTokens), f.HasInputTokens}, {float64(f.OutputTokens), f.HasOutputTokens},
			{f.CostUSD, f.HasCost}, {f.LatencyMS, f.HasLatency}} {
			if v.ok {
				values[d] = append(values[d], v.value)
				seqs[d] = entries[i].Seq
			}
		}
	}
	for d, name := range names {
		dim := assess(name, values[d], opts.ZThreshold)
		dim.Seq = seqs[d]
		run.Dimensions = append(run.Dimensions, dim)
		run.Flagged = run.Flagged || dim.Flagged
	}
	return run, nil
}

// assess tests the last of values against the ones before it.
func assess(name string, values []float64, zThreshold float64) Dimension {
	dim := Dimension{Name: name, Status: StatusInsufficientData, N: len(values)}
	if len(values) < MinBaseline+1 {
		return dim
	}
	x, baseline := values[len(values)-1], values[:len(values)-1]
	s := summarize(baseline)
	st := &Stats{Value: x, Mean: s.mean, StdDev: s.stdDev, Q1: s.q1, Q3: s.q3, IQR: s.iqr,
		LowerFence: s.q1 - IQRFactor*s.iqr, UpperFence: s.q3 + IQRFactor*s.iqr}
	if !s.allEqual && s.stdDev > 0 {
		z := (x - s.mean) / s.stdDev
		st.Z = &z
		dim.ZFlagged = math.Abs(z) > zThreshold
	}
	dim.IQRFlagged = x < st.LowerFence || x > st.UpperFence
	dim.Flagged = dim.ZFlagged || dim.IQRFlagged
	dim.Status, dim.Stats = StatusOK, st
	return dim
}

// Chain is what RunRegression needs of a chain store; *store.Store implements it.
type Chain interface {
	// TailEntries returns the last n entries of the chain, oldest first.
	TailEntries(ctx context.Context, n int) ([]protocol.Entry, error)
	// SaveRegression stores run and sets its ID.
	SaveRegression(ctx context.Context, run *Run) error
}

// RunRegression reads the chain's last opts.Window entries, tests them with Regress,
// stores the run in the chain's database and returns it. Invalid options fail with an
// error wrapping ErrInvalidInput, before anything is read.
func RunRegression(ctx context.Context, chain Chain, opts RegressionOptions) (*Run, error) {
	opts, err := opts.Complete()
	if err != nil {
		return nil, err
	}
	started := time.Now().UTC()
	entries, err := chain.TailEntries(ctx, opts.Window)
	if err != nil {
		return nil, fmt.Errorf("regression: %w", err)
	}
	run, err := Regress(entries, opts)
	if err != nil {
		return nil, err
	}
	run.StartedAt = started
	if err := chain.SaveRegression(ctx, run); err != nil {
		return nil, fmt.Errorf("regression: %w", err)
	}
	return run, nil
}
