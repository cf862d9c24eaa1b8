package consensus

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAPI is a local server speaking the OpenAI chat-completions API, the stand-in for
// a real model API in these tests. Each model name gets a canned answer; a few names
// misbehave on purpose.
type fakeAPI struct {
	srv     *httptest.Server
	answers map[string]string

	// slowArrived receives a value each time a request for modelSlow is being held.
	slowArrived chan struct{}

	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Auth        string
	ContentType string
	Body        map[string]any
}

// Model names the fake treats specially.
const (
	modelServerError = "broken-500"
	modelTextError   = "broken-502-text"
	modelAuthError   = "broken-401-string"
	modelMalformed   = "malformed-json"
	modelNoChoices   = "no-choices"
	modelNullContent = "null-content"
	modelHuge        = "huge-body"
	modelSlow        = "slow" // and every name starting so: answers only when the client gives up
)

func newFakeAPI(t *testing.T, answers map[string]string) *fakeAPI {
	t.Helper()
	f := &fakeAPI{answers: answers, slowArrived: make(chan struct{}, 64)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the API root, as a user would configure it.
func (f *fakeAPI) baseURL() string { return f.srv.URL + "/v1" }

func (f *fakeAPI) recorded() []recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRequest(nil), f.requests...)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, recordedRequest{Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"), Body: body})
	f.mu.Unlock()
	model, _ := body["model"].(string)
	if strings.HasPrefix(model, modelSlow) {
		model = modelSlow
	}
	w.Header().Set("Content-Type", "application/json")
	switch model {
	case modelServerError:
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprint(w, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`)
	case modelTextError:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprint(w, "<html>\r\nBad gateway\x1b[31m</html>")
	case modelAuthError:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprint(w, `{"error":"invalid api key"}`)
	case modelMalformed:
		_, _ = fmt.Fprint(w, `{"choices":[{"message":{"content":"cut off`)
	case modelNoChoices:
		_, _ = fmt.Fprint(w, `{"id":"x","model":"no-choices","choices":[]}`)
	case modelNullContent:
		_, _ = fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":null}}]}`)
	case modelHuge:
		_, _ = fmt.Fprintf(w, `{"choices":[{"message":{"content":%q}}]}`, strings.Repeat("a", 2<<20))
	case modelSlow:
		f.slowArrived <- struct{}{}
		<-r.Context().Done()
	default:
		answer, ok := f.answers[model]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"The model %s does not exist","type":"invalid_request_error","code":"model_not_found"}}`, model)
			return
		}
		resp := map[string]any{
			"id":      "chatcmpl-1",
			"object":  "chat.completion",
			"model":   model + "-2024-01-01",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": len(strings.Fields(answer)), "total_tokens": 11 + len(strings.Fields(answer))},
		}
		_ = json.NewEncoder(w).Encode(resp)
	}
}
