package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/consensus"
)

// chatServer is a local stand-in for a model API: it speaks the OpenAI chat-completions
// protocol (POST /v1/chat/completions) and answers each model with a fixed text; models
// it does not know get the API's 404 error. It records the models asked and the
// Authorization headers sent.
type chatServer struct {
	srv     *httptest.Server
	answers map[string]string

	mu     sync.Mutex
	models []string
	auths  []string
}

func newChatServer(t *testing.T, answers map[string]string) *chatServer {
	t.Helper()
	c := &chatServer{answers: answers}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil ||
		len(req.Messages) != 1 || req.Messages[0].Role != "user" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"bad request","type":"invalid_request_error"}}`))
		return
	}
	c.mu.Lock()
	c.models = append(c.models, req.Model)
	c.auths = append(c.auths, r.Header.Get("Authorization"))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	answer, ok := c.answers[req.Model]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"The model ` + req.Model + ` does not exist","type":"invalid_request_error","code":"model_not_found"}}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer}}},
		"usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
	})
}

// asked returns the models asked and the Authorization headers, in arrival order.
func (c *chatServer) asked() ([]string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.models...), append([]string(nil), c.auths...)
}

// evaluatorFor returns an evaluator whose one provider is the chat server.
func evaluatorFor(t *testing.T, c *chatServer) *consensus.Evaluator {
	t.Helper()
	p, err := consensus.NewOpenAIProvider(consensus.OpenAIConfig{BaseURL: c.srv.URL + "/v1", APIKey: "model-api-key"})
	if err != nil {
		t.Fatal(err)
	}
	return consensus.NewEvaluator(nil, p)
}

func TestConsensusEvaluate(t *testing.T) {
	chat := newChatServer(t, map[string]string{
		"model-a": "Water boils at 100 degrees Celsius at sea level.",
		"model-b": "At sea level water boils at 100 degrees Celsius.",
		"model-c": "Bananas are yellow and rich in potassium.",
	})
	f := newFixture(t, 0, func(o *Options) {
		o.APIKey = testAPIKey
		o.Consensus = evaluatorFor(t, chat)
		o.ConsensusModels = []string{"model-a", "model-b"}
	})
	resp, body := f.postJSON("/api/consensus/evaluate", `{"prompt":"hi","models":["model-a","model-b"]}`)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	if models, _ := chat.asked(); len(models) != 0 {
		t.Fatalf("models were asked without the API key: %v", models)
	}

	tests := map[string]struct {
		body     string
		verdict  consensus.Verdict
		answered int
		failed   int
		models   []string
	}{
		"two models agree": {body: `{"prompt":"At what temperature does water boil?","models":["model-a","model-b"]}`,
			verdict: consensus.VerdictConsensus, answered: 2, models: []string{"model-a", "model-b"}},
		"the server's default models": {body: `{"prompt":"At what temperature does water boil?"}`,
			verdict: consensus.VerdictConsensus, answered: 2, models: []string{"model-a", "model-b"}},
		"an off-topic answer": {body: `{"prompt":"At what temperature does water boil?","models":["model-a","model-c"],"threshold":0.9}`,
			verdict: consensus.VerdictNoConsensus, answered: 2, models: []string{"model-a", "model-c"}},
		"a model the API lacks": {body: `{"prompt":"At what temperature does water boil?","models":["model-a","model-x"]}`,
			verdict: consensus.VerdictInsufficientAnswers, answered: 1, failed: 1, models: []string{"model-a", "model-x"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before, _ := chat.asked()
			resp, body := f.postJSON("/api/consensus/evaluate", tc.body, auth...)
			var res consensus.Result
			decode(t, body, &res)
			if resp.StatusCode != http.StatusOK || res.Verdict != tc.verdict || res.Answered != tc.answered || res.Failed != tc.failed ||
				len(res.Answers) != len(tc.models) || res.Method != consensus.SimilarityMethod {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			for i, a := range res.Answers {
				if a.Model != tc.models[i] || a.Provider != consensus.DefaultProviderName {
					t.Errorf("answer %d: %+v, want model %s", i, a, tc.models[i])
				}
			}
			if tc.failed > 0 && !strings.Contains(res.Answers[1].Error, "does not exist") {
				t.Errorf("the failed call's error: %q", res.Answers[1].Error)
			}
			models, auths := chat.asked()
			if got := models[len(before):]; len(got) != len(tc.models) {
				t.Errorf("the API was asked for %v, want %v", got, tc.models)
			}
			for _, a := range auths {
				if a != "Bearer model-api-key" {
					t.Errorf("the model API got Authorization %q", a)
				}
			}
		})
	}

	for name, tc := range map[string]struct{ body, code string }{
		"not JSON":          {`{"prompt":`, codeBadJSON},
		"an empty body":     {``, codeBadJSON},
		"an unknown member": {`{"prompt":"hi","model":"model-a"}`, codeBadJSON},
		"one model":         {`{"prompt":"hi","models":["model-a"]}`, codeBadParameter},
		"a model twice":     {`{"prompt":"hi","models":["model-a","model-a"]}`, codeBadParameter},
		"no prompt":         {`{"models":["model-a","model-b"]}`, codeBadParameter},
		"a bad threshold":   {`{"prompt":"hi","threshold":1.5}`, codeBadParameter},
		"a long timeout":    {`{"prompt":"hi","timeout_ms":600000}`, codeBadParameter},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/consensus/evaluate", tc.body, auth...)
			wantError(t, resp, body, http.StatusBadRequest, tc.code)
		})
	}
	resp, body = f.postJSON("/api/consensus/evaluate", `{"prompt":"`+strings.Repeat("a", consensus.MaxRequestBytes)+`"}`, auth...)
	wantError(t, resp, body, http.StatusRequestEntityTooLarge, codeBodyTooLarge)
}

func TestConsensusWithoutProvider(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey })
	resp, body := f.postJSON("/api/consensus/evaluate", `{"prompt":"hi","models":["a","b"]}`)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.postJSON("/api/consensus/evaluate", `{"prompt":"hi","models":["a","b"]}`, auth...)
	if e := wantError(t, resp, body, http.StatusServiceUnavailable, codeNoProvider); !strings.Contains(e.Message, "--consensus-url") {
		t.Errorf("503 says %q", e.Message)
	}
	// Without default models a request must name its models.
	chat := newChatServer(t, map[string]string{"a": "yes", "b": "yes"})
	named := newFixture(t, 0, func(o *Options) { o.Consensus = evaluatorFor(t, chat) })
	resp, body = named.postJSON("/api/consensus/evaluate", `{"prompt":"hi"}`)
	if e := wantError(t, resp, body, http.StatusBadRequest, codeBadParameter); !strings.Contains(e.Message, "models") {
		t.Errorf("400 says %q", e.Message)
	}
}

func TestConsensusStakes(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey })
	resp, body := f.do(http.MethodGet, "/api/consensus/stakes", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	resp, body = f.do(http.MethodGet, "/api/consensus/stakes", "", nil, auth...)
	var got consensus.StakesTable
	decode(t, body, &got)
	want, err := json.Marshal(consensus.Stakes())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != string(want) || len(got.Levels) != 4 || len(got.Domains) == 0 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestNewRefusesBadDefaultModels(t *testing.T) {
	f := newFixture(t, 0, nil)
	for name, models := range map[string][]string{
		"one model":     {"a"},
		"a model twice": {"a", "a"},
		"nine models":   {"1", "2", "3", "4", "5", "6", "7", "8", "9"},
	} {
		if _, err := New(Options{Store: f.store, ConsensusModels: models}); err == nil {
			t.Errorf("%s: New did not fail", name)
		}
	}
	if _, err := New(Options{Store: f.store, DefaultRegion: strings.Repeat("r", 257)}); err == nil {
		t.Error("a 257-byte region: New did not fail")
	}
}
