package consensus

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// cannedAnswers are what the fake API answers per model.
var cannedAnswers = map[string]string{
	"model-a":      "The capital of France is Paris.",
	"model-b":      "Paris is the capital of France.",
	"model-c":      "France's capital city is Paris.",
	"model-wrong":  "Lyon, in the Rhône valley, is its largest city.",
	"model-other":  "Bananas grow best in humid tropical climates.",
	"model-spaces": "   ",
}

func evaluator(t *testing.T) (*Evaluator, *fakeAPI) {
	t.Helper()
	api := newFakeAPI(t, cannedAnswers)
	p := newProvider(t, OpenAIConfig{Name: "fake", BaseURL: api.baseURL(), APIKey: "k"})
	return NewEvaluator(nil, p), api
}

func TestEvaluateAgreement(t *testing.T) {
	e, api := evaluator(t)
	res, err := e.Evaluate(context.Background(), Request{Prompt: "What is the capital of France?", Models: []string{"model-a", "model-b", "model-c"}})
	if err != nil {
		t.Fatal(err)
	}
	// Words after stopwords: a = b = {capital, france, paris}; c = {france, s, capital,
	// city, paris}. sim(a,b) = 1; sim(a,c) = sim(b,c) = 3/(√3·√5) = 0.7746.
	ac := 3 / (math.Sqrt(3) * math.Sqrt(5))
	if res.Verdict != VerdictConsensus || !res.Consensus || res.Answered != 3 || res.Failed != 0 || res.Threshold != DefaultThreshold {
		t.Fatalf("result %+v", res)
	}
	wantAgreement := (1 + 2*ac) / 3
	if math.Abs(*res.Agreement-wantAgreement) > 1e-12 {
		t.Errorf("agreement %v, want %v", *res.Agreement, wantAgreement)
	}
	if res.Matrix[0][1] != 1 || math.Abs(res.Matrix[0][2]-ac) > 1e-12 || res.Matrix[2][0] != res.Matrix[0][2] || res.Matrix[1][1] != 1 {
		t.Errorf("matrix %v", res.Matrix)
	}
	// a and b tie on mean similarity (1+ac)/2; the first in request order wins.
	if res.Best == nil || res.Best.Model != "model-a" || math.Abs(*res.Best.MeanSimilarity-(1+ac)/2) > 1e-12 {
		t.Errorf("best %+v", res.Best)
	}
	if strings.Join(res.MatrixModels, ",") != "model-a,model-b,model-c" || res.Method != SimilarityMethod {
		t.Errorf("matrix models %v method %s", res.MatrixModels, res.Method)
	}
	for _, a := range res.Answers {
		if a.Provider != "fake" || a.Text != cannedAnswers[a.Model] || a.LatencyMS <= 0 || a.Usage == nil || a.Error != "" {
			t.Errorf("answer %+v", a)
		}
	}
	if n := len(api.recorded()); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
	for _, r := range api.recorded() {
		if r.Auth != "Bearer k" {
			t.Errorf("auth header %q", r.Auth)
		}
	}
}

func TestEvaluateDisagreement(t *testing.T) {
	e, _ := evaluator(t)
	res, err := e.Evaluate(context.Background(), Request{Prompt: "What is the capital of France?", Models: []string{"model-a", "model-wrong", "model-other"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictNoConsensus || res.Consensus || *res.Agreement >= 0.2 {
		t.Errorf("verdict %s agreement %v", res.Verdict, *res.Agreement)
	}
	// A lower threshold turns the same answers into consensus.
	zero := 0.0
	res, err = e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{"model-a", "model-other"}, Threshold: &zero})
	if err != nil || res.Verdict != VerdictConsensus || *res.Agreement != 0 {
		t.Errorf("threshold 0: %+v, %v", res, err)
	}
}

func TestEvaluateReportsFailures(t *testing.T) {
	e, _ := evaluator(t)
	res, err := e.Evaluate(context.Background(), Request{Prompt: "capital?", Models: []string{"model-a", modelServerError, "model-b", modelMalformed, "model-spaces"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered != 2 || res.Failed != 3 || res.Verdict != VerdictConsensus || *res.Agreement != 1 {
		t.Fatalf("result %+v", res)
	}
	wantErr := map[string]string{
		modelServerError: "HTTP 500",
		modelMalformed:   "malformed chat-completions response",
		"model-spaces":   "empty answer",
	}
	for _, a := range res.Answers {
		want, failed := wantErr[a.Model]
		if failed != (a.Error != "") || failed && !strings.Contains(a.Error, want) || failed && (a.Text != "" || a.MeanSimilarity != nil) {
			t.Errorf("answer %+v", a)
		}
	}
	if strings.Join(res.MatrixModels, ",") != "model-a,model-b" || len(res.Matrix) != 2 {
		t.Errorf("matrix over %v: %v", res.MatrixModels, res.Matrix)
	}
}

func TestEvaluateInsufficientAnswers(t *testing.T) {
	e, _ := evaluator(t)
	res, err := e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{"model-a", modelServerError}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictInsufficientAnswers || res.Consensus || res.Agreement != nil || res.Best == nil || res.Best.Model != "model-a" {
		t.Errorf("one answer: %+v", res)
	}
	res, err = e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{modelNoChoices, modelServerError}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictInsufficientAnswers || res.Best != nil || res.Answered != 0 {
		t.Errorf("no answer: %+v", res)
	}
	body, _ := json.Marshal(res)
	for _, want := range []string{`"agreement":null`, `"best":null`, `"matrix":[]`, `"matrix_models":[]`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("JSON lacks %s: %s", want, body)
		}
	}
}

func TestEvaluateSlowModelTimesOut(t *testing.T) {
	e, _ := evaluator(t)
	res, err := e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{"model-a", modelSlow, "model-b"}, TimeoutMS: 100})
	if err != nil {
		t.Fatal(err)
	}
	slow := res.Answers[1]
	if !strings.Contains(slow.Error, "context deadline exceeded") || res.Answered != 2 || res.Verdict != VerdictConsensus {
		t.Errorf("result %+v, slow answer %+v", res, slow)
	}
}

func TestEvaluateCancelledContext(t *testing.T) {
	e, api := evaluator(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-api.slowArrived
		<-api.slowArrived
		cancel()
	}()
	res, err := e.Evaluate(ctx, Request{Prompt: "q", Models: []string{modelSlow, modelSlow + "-2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Answers {
		if !strings.Contains(a.Error, "context canceled") {
			t.Errorf("answer %+v", a)
		}
	}
}

// panicProvider panics on every call.
type panicProvider struct{}

func (panicProvider) Name() string { return "panicky" }
func (panicProvider) Complete(context.Context, string, string) (Completion, error) {
	panic("boom")
}

// staticProvider answers every model with the same text.
type staticProvider string

func (staticProvider) Name() string { return "static" }
func (s staticProvider) Complete(context.Context, string, string) (Completion, error) {
	return Completion{Text: string(s)}, nil
}

func TestEvaluateProviderPanicIsReported(t *testing.T) {
	res, err := Evaluate(context.Background(), []Target{{"x", panicProvider{}}, {"y", staticProvider("fine")}}, "q", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Answers[0].Error, "provider panicked: boom") || res.Verdict != VerdictInsufficientAnswers {
		t.Errorf("result %+v", res)
	}
}

func TestEvaluatorRoutesByModel(t *testing.T) {
	e := NewEvaluator(map[string]Provider{"special": staticProvider("routed")}, nil)
	if _, err := e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{"special", "other"}}); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("err %v, want ErrUnknownModel naming other", err)
	}
	e = NewEvaluator(map[string]Provider{"special": staticProvider("routed")}, staticProvider("fallback"))
	res, err := e.Evaluate(context.Background(), Request{Prompt: "q", Models: []string{"special", "other"}})
	if err != nil || res.Answers[0].Text != "routed" || res.Answers[1].Text != "fallback" {
		t.Errorf("answers %+v, %v", res, err)
	}
}

func TestEvaluateStakes(t *testing.T) {
	targets := []Target{{"a", staticProvider("Take 200 mg.")}, {"b", staticProvider("Take 200 mg.")}}
	res, err := Evaluate(context.Background(), targets, "What dosage of ibuprofen is safe?", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "dosage" is a high-stakes medical keyword: three models are required, two answered.
	if res.Stakes.Level != LevelHigh || res.StakesMet || res.Stakes.Requirement.MinModels != 3 {
		t.Errorf("stakes %+v met %v", res.Stakes, res.StakesMet)
	}
	res, err = Evaluate(context.Background(), targets, "Write a limerick", Options{})
	if err != nil || res.Stakes.Level != LevelLow || !res.StakesMet {
		t.Errorf("low stakes: %+v, %v", res, err)
	}
}

func TestRequestValidate(t *testing.T) {
	bad := -0.1
	over := 1.5
	nan := math.NaN()
	many := make([]string, MaxModels+1)
	for i := range many {
		many[i] = strings.Repeat("m", i+1)
	}
	cases := map[string]struct {
		req  Request
		want string
	}{
		"empty prompt":     {Request{Prompt: " \n", Models: []string{"a", "b"}}, "prompt is empty"},
		"huge prompt":      {Request{Prompt: strings.Repeat("x", MaxPromptBytes+1), Models: []string{"a", "b"}}, "prompt is"},
		"one model":        {Request{Prompt: "q", Models: []string{"a"}}, "1 given, want 2 to 8"},
		"too many models":  {Request{Prompt: "q", Models: many}, "9 given"},
		"blank model":      {Request{Prompt: "q", Models: []string{"a", " "}}, "models[1]"},
		"duplicate model":  {Request{Prompt: "q", Models: []string{"a", "a"}}, `"a" listed twice`},
		"negative thresh":  {Request{Prompt: "q", Models: []string{"a", "b"}, Threshold: &bad}, "threshold -0.1"},
		"threshold over 1": {Request{Prompt: "q", Models: []string{"a", "b"}, Threshold: &over}, "threshold 1.5"},
		"NaN threshold":    {Request{Prompt: "q", Models: []string{"a", "b"}, Threshold: &nan}, "threshold NaN"},
		"negative timeout": {Request{Prompt: "q", Models: []string{"a", "b"}, TimeoutMS: -1}, "timeout_ms -1"},
		"timeout too long": {Request{Prompt: "q", Models: []string{"a", "b"}, TimeoutMS: 300_001}, "timeout_ms 300001"},
	}
	e := NewEvaluator(nil, staticProvider("x"))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := e.Evaluate(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Evaluate(context.Background(), []Target{{"a", nil}, {"b", staticProvider("x")}}, "q", Options{}); err == nil {
		t.Error("nil provider accepted")
	}
}

func TestRequestDecodesFromJSON(t *testing.T) {
	var req Request
	if err := json.Unmarshal([]byte(`{"prompt":"q","models":["a","b"],"threshold":0.5,"timeout_ms":2000}`), &req); err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(); err != nil || *req.Threshold != 0.5 || req.TimeoutMS != 2000 {
		t.Errorf("request %+v: %v", req, err)
	}
}
