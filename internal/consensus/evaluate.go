package consensus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Limits and defaults of a consensus run.
const (
	// DefaultThreshold is the agreement a run needs for consensus when none is given.
	DefaultThreshold = 0.7
	// MinModels and MaxModels bound how many models one run asks.
	MinModels = 2
	MaxModels = 8
	// MaxPromptBytes is the longest prompt a run sends.
	MaxPromptBytes = 256 << 10
	// MaxModelNameBytes is the longest model name.
	MaxModelNameBytes = 256
	// MaxTimeout bounds a request's timeout_ms.
	MaxTimeout = 5 * time.Minute
	// MaxRequestBytes is the body size an HTTP handler should accept for a request.
	MaxRequestBytes = 1 << 20
)

// Verdict is the outcome of a consensus run.
type Verdict string

// The verdicts.
const (
	// VerdictConsensus: at least two models answered and agreement >= threshold.
	VerdictConsensus Verdict = "consensus"
	// VerdictNoConsensus: at least two models answered and agreement < threshold.
	VerdictNoConsensus Verdict = "no_consensus"
	// VerdictInsufficientAnswers: fewer than two models answered.
	VerdictInsufficientAnswers Verdict = "insufficient_answers"
)

// ErrUnknownModel is returned by an Evaluator asked for a model no provider serves.
var ErrUnknownModel = errors.New("no provider for model")

// Request is the body of POST /api/consensus/evaluate.
type Request struct {
	// Prompt is sent to every model.
	Prompt string `json:"prompt"`
	// Models are the models to ask, MinModels to MaxModels distinct names.
	Models []string `json:"models"`
	// Threshold is the agreement needed for consensus, in [0, 1]; DefaultThreshold
	// when absent.
	Threshold *float64 `json:"threshold,omitempty"`
	// TimeoutMS bounds each model's call, in milliseconds (at most MaxTimeout); the
	// provider's own timeout when 0.
	TimeoutMS int `json:"timeout_ms,omitempty"`
}

// Validate checks the request's fields and limits.
func (r Request) Validate() error {
	if strings.TrimSpace(r.Prompt) == "" {
		return errors.New("prompt is empty")
	}
	if len(r.Prompt) > MaxPromptBytes {
		return fmt.Errorf("prompt is %d bytes, at most %d allowed", len(r.Prompt), MaxPromptBytes)
	}
	if len(r.Models) < MinModels || len(r.Models) > MaxModels {
		return fmt.Errorf("models: %d given, want %d to %d", len(r.Models), MinModels, MaxModels)
	}
	seen := map[string]bool{}
	for i, m := range r.Models {
		if strings.TrimSpace(m) == "" || len(m) > MaxModelNameBytes {
			return fmt.Errorf("models[%d]: want a name of 1-%d bytes", i, MaxModelNameBytes)
		}
		if seen[m] {
			return fmt.Errorf("models[%d]: %q listed twice", i, m)
		}
		seen[m] = true
	}
	if r.Threshold != nil && !(*r.Threshold >= 0 && *r.Threshold <= 1) {
		return fmt.Errorf("threshold %v: want a number in [0, 1]", *r.Threshold)
	}
	if r.TimeoutMS < 0 || time.Duration(r.TimeoutMS)*time.Millisecond > MaxTimeout {
		return fmt.Errorf("timeout_ms %d: want 0 to %d", r.TimeoutMS, MaxTimeout.Milliseconds())
	}
	return nil
}

// Target is one model to ask and the provider that serves it.
type Target struct {
	// Model is the name sent to Provider.
	Model    string
	Provider Provider
}

// Options tune Evaluate.
type Options struct {
	// Threshold is the agreement needed for consensus; DefaultThreshold when nil.
	Threshold *float64
	// Timeout bounds each model's call; none beyond the context's and the provider's
	// own when 0.
	Timeout time.Duration
}

// Answer is one model's part in a run.
type Answer struct {
	// Model and Provider say who was asked.
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Text is the answer; empty when the call failed.
	Text string `json:"text"`
	// LatencyMS is how long the call took, in milliseconds.
	LatencyMS float64 `json:"latency_ms"`
	// Usage is the server's token count, when it gave one.
	Usage *Usage `json:"usage,omitempty"`
	// Error says why the call failed; empty when it answered.
	Error string `json:"error,omitempty"`
	// MeanSimilarity is the answer's mean similarity to the other answers; absent for
	// a failed call or when it is the only answer.
	MeanSimilarity *float64 `json:"mean_similarity,omitempty"`
}

// Result is the response of POST /api/consensus/evaluate.
type Result struct {
	// Verdict is consensus, no_consensus or insufficient_answers.
	Verdict Verdict `json:"verdict"`
	// Consensus is true when Verdict is consensus.
	Consensus bool `json:"consensus"`
	// Agreement is the mean pairwise similarity of the answers; null with fewer than
	// two answers.
	Agreement *float64 `json:"agreement"`
	// Threshold is the agreement consensus needed.
	Threshold float64 `json:"threshold"`
	// Method names the similarity measure (SimilarityMethod).
	Method string `json:"method"`
	// Answers are in request order, failed calls included.
	Answers []Answer `json:"answers"`
	// Answered and Failed count the calls.
	Answered int `json:"answered"`
	Failed   int `json:"failed"`
	// MatrixModels label the rows and columns of Matrix: the models that answered.
	MatrixModels []string `json:"matrix_models"`
	// Matrix is the pairwise similarity of the answers (symmetric, 1 on the diagonal).
	Matrix [][]float64 `json:"matrix"`
	// Best is the answer that agrees most with the others; null with no answer.
	Best *Answer `json:"best"`
	// Stakes is the prompt's stakes classification; StakesMet says whether this run
	// meets its requirement (enough answers and agreement).
	Stakes    Classification `json:"stakes"`
	StakesMet bool           `json:"stakes_met"`
	// EvaluationMS is the time the whole run took, in milliseconds.
	EvaluationMS float64 `json:"evaluation_ms"`
}

// Evaluate asks every target the prompt concurrently and scores how far the answers
// agree (see the package comment). A failed call is reported in its Answer; the run
// still succeeds. Errors are returned only for bad arguments: fewer than MinModels or
// more than MaxModels targets, a nil provider, an empty prompt, a threshold outside
// [0, 1]. When ctx ends, calls still running fail with its error.
func Evaluate(ctx context.Context, targets []Target, prompt string, opts Options) (*Result, error) {
	start := time.Now()
	threshold := DefaultThreshold
	if opts.Threshold != nil {
		threshold = *opts.Threshold
	}
	if err := checkTargets(targets, prompt, threshold); err != nil {
		return nil, fmt.Errorf("consensus: %w", err)
	}
	answers := make([]Answer, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() { answers[i] = ask(ctx, t, prompt, opts.Timeout) })
	}
	wg.Wait()
	res := score(answers, threshold)
	res.Stakes = ClassifyStakes(prompt)
	req := res.Stakes.Requirement
	res.StakesMet = res.Answered >= req.MinModels &&
		(req.MinAgreement == 0 || res.Agreement != nil && *res.Agreement >= req.MinAgreement)
	res.EvaluationMS = millisSince(start)
	return res, nil
}

func checkTargets(targets []Target, prompt string, threshold float64) error {
	if len(targets) < MinModels || len(targets) > MaxModels {
		return fmt.Errorf("%d models given, want %d to %d", len(targets), MinModels, MaxModels)
	}
	for i, t := range targets {
		if t.Provider == nil {
			return fmt.Errorf("model %d (%q) has no provider", i, t.Model)
		}
	}
	if strings.TrimSpace(prompt) == "" {
		return errors.New("prompt is empty")
	}
	if !(threshold >= 0 && threshold <= 1) {
		return fmt.Errorf("threshold %v: want a number in [0, 1]", threshold)
	}
	return nil
}

// ask makes one call, turning a failure (or a panic of the provider) into Answer.Error.
func ask(ctx context.Context, t Target, prompt string, timeout time.Duration) (a Answer) {
	a = Answer{Model: t.Model, Provider: t.Provider.Name()}
	start := time.Now()
	defer func() {
		a.LatencyMS = millisSince(start)
		if p := recover(); p != nil {
			a.Text, a.Error = "", fmt.Sprintf("provider panicked: %v", p)
		}
	}()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c, err := t.Provider.Complete(ctx, t.Model, prompt)
	switch {
	case err != nil:
		a.Error = err.Error()
	case strings.TrimSpace(c.Text) == "":
		a.Error = "empty answer"
	default:
		a.Text, a.Usage = c.Text, c.Usage
	}
	return a
}

// score fills in the similarity part of a result from the answers.
func score(answers []Answer, threshold float64) *Result {
	res := &Result{Answers: answers, Threshold: threshold, Method: SimilarityMethod, MatrixModels: []string{}, Matrix: [][]float64{}}
	var ok []int // indexes of answers that answered
	for i, a := range answers {
		if a.Error == "" {
			ok = append(ok, i)
		}
	}
	res.Answered, res.Failed = len(ok), len(answers)-len(ok)
	counts := make([]map[string]int64, len(ok))
	for k, i := range ok {
		counts[k] = wordCounts(answers[i].Text)
		res.MatrixModels = append(res.MatrixModels, answers[i].Model)
		res.Matrix = append(res.Matrix, make([]float64, len(ok)))
	}
	sum := 0.0
	for k := range ok {
		res.Matrix[k][k] = 1
		for l := k + 1; l < len(ok); l++ {
			s := cosine(counts[k], counts[l])
			res.Matrix[k][l], res.Matrix[l][k] = s, s
			sum += s
		}
	}
	best, bestMean := -1, -1.0
	if len(ok) == 1 {
		best = ok[0]
	}
	for k, i := range ok {
		if len(ok) < 2 {
			break // a lone answer has no mean similarity
		}
		mean := 0.0
		for l := range ok {
			if l != k {
				mean += res.Matrix[k][l]
			}
		}
		mean /= float64(len(ok) - 1)
		answers[i].MeanSimilarity = &mean
		if mean > bestMean {
			best, bestMean = i, mean
		}
	}
	res.Verdict = VerdictInsufficientAnswers
	if len(ok) >= 2 {
		agreement := sum / float64(len(ok)*(len(ok)-1)/2)
		res.Agreement = &agreement
		res.Consensus = agreement >= threshold
		res.Verdict = VerdictNoConsensus
		if res.Consensus {
			res.Verdict = VerdictConsensus
		}
	}
	if best >= 0 {
		b := answers[best]
		res.Best = &b
	}
	return res
}

func millisSince(start time.Time) float64 {
	return float64(time.Since(start).Nanoseconds()) / 1e6
}

// Evaluator runs consensus requests against configured providers; safe for concurrent
// use.
type Evaluator struct {
	byModel  map[string]Provider
	fallback Provider
}

// NewEvaluator returns an evaluator that sends each model to byModel[model], or to
// fallback when byModel has no entry (fallback may be nil: such models are then
// unknown). A single OpenAI-compatible endpoint serving many models is a fallback
// with an empty map.
func NewEvaluator(byModel map[string]Provider, fallback Provider) *Evaluator {
	m := make(map[string]Provider, len(byModel))
	for k, v := range byModel {
		m[k] = v
	}
	return &Evaluator{byModel: m, fallback: fallback}
}

// Evaluate validates req, resolves its models to providers and runs Evaluate. Errors:
// the validation error, or ErrUnknownModel (wrapped, naming the model).
func (e *Evaluator) Evaluate(ctx context.Context, req Request) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("consensus request: %w", err)
	}
	targets := make([]Target, len(req.Models))
	for i, m := range req.Models {
		p := e.byModel[m]
		if p == nil {
			p = e.fallback
		}
		if p == nil {
			return nil, fmt.Errorf("consensus request: %w %q", ErrUnknownModel, m)
		}
		targets[i] = Target{Model: m, Provider: p}
	}
	return Evaluate(ctx, targets, req.Prompt, Options{
		Threshold: req.Threshold,
		Timeout:   time.Duration(req.TimeoutMS) * time.Millisecond,
	})
}
