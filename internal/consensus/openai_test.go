package consensus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func newProvider(t *testing.T, cfg OpenAIConfig) *OpenAIProvider {
	t.Helper()
	p, err := NewOpenAIProvider(cfg)
	if err != nil {
		t.Fatalf("NewOpenAIProvider: %v", err)
	}
	return p
}

func TestCompleteSendsChatRequest(t *testing.T) {
	api := newFakeAPI(t, map[string]string{"gpt-test": "Paris is the capital of France."})
	temp := 0.2
	p := newProvider(t, OpenAIConfig{Name: "local", BaseURL: api.baseURL() + "/", APIKey: "sk-test-123", Temperature: &temp, MaxTokens: 64})
	c, err := p.Complete(context.Background(), "gpt-test", "Capital of France?")
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if c.Text != "Paris is the capital of France." || c.Model != "gpt-test-2024-01-01" || c.Usage == nil || c.Usage.PromptTokens != 11 || c.Usage.TotalTokens != 17 {
		t.Errorf("completion %+v usage %+v", c, c.Usage)
	}
	if p.Name() != "local" {
		t.Errorf("name %q", p.Name())
	}
	reqs := api.recorded()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Auth != "Bearer sk-test-123" || r.ContentType != "application/json" {
		t.Errorf("headers: auth %q content-type %q", r.Auth, r.ContentType)
	}
	msgs, _ := r.Body["messages"].([]any)
	msg, _ := msgs[0].(map[string]any)
	if r.Body["model"] != "gpt-test" || len(msgs) != 1 || msg["role"] != "user" || msg["content"] != "Capital of France?" ||
		r.Body["temperature"] != 0.2 || r.Body["max_tokens"] != 64.0 {
		t.Errorf("request body %v", r.Body)
	}
}

func TestCompleteWithoutKeySendsNoAuthorization(t *testing.T) {
	api := newFakeAPI(t, map[string]string{"m": "ok"})
	p := newProvider(t, OpenAIConfig{BaseURL: api.baseURL()})
	if _, err := p.Complete(context.Background(), "m", "hi"); err != nil {
		t.Fatal(err)
	}
	r := api.recorded()[0]
	if r.Auth != "" || r.Body["temperature"] != 0.0 || r.Body["max_tokens"] != nil || p.Name() != DefaultProviderName {
		t.Errorf("auth %q, body %v, name %q", r.Auth, r.Body, p.Name())
	}
}

func TestCompleteErrors(t *testing.T) {
	api := newFakeAPI(t, map[string]string{})
	p := newProvider(t, OpenAIConfig{BaseURL: api.baseURL(), MaxResponseBytes: 1 << 20})
	cases := map[string]struct {
		model   string
		wantIs  error
		wantAPI *APIError
		wantMsg string
	}{
		"500 with OpenAI error body": {model: modelServerError,
			wantAPI: &APIError{StatusCode: 500, Message: "The server had an error while processing your request.", Type: "server_error"},
			wantMsg: "HTTP 500 Internal Server Error: The server had an error"},
		"404 with code": {model: "no-such-model",
			wantAPI: &APIError{StatusCode: 404, Message: "The model no-such-model does not exist", Type: "invalid_request_error", Code: "model_not_found"},
			wantMsg: `code "model_not_found"`},
		"401 with a string error": {model: modelAuthError,
			wantAPI: &APIError{StatusCode: 401, Message: "invalid api key"}},
		"502 with an HTML body": {model: modelTextError,
			wantAPI: &APIError{StatusCode: 502, Message: "<html>  Bad gateway [31m</html>"}},
		"malformed JSON":    {model: modelMalformed, wantIs: ErrMalformedResponse},
		"empty choices":     {model: modelNoChoices, wantIs: ErrEmptyChoices, wantMsg: "choices is empty"},
		"null content":      {model: modelNullContent, wantIs: ErrEmptyChoices, wantMsg: "null"},
		"body over the cap": {model: modelHuge, wantIs: ErrResponseTooLarge, wantMsg: "over 1048576 bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), tc.model, "hi")
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err %v, want errors.Is %v", err, tc.wantIs)
			}
			if tc.wantAPI != nil {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || *apiErr != *tc.wantAPI {
					t.Errorf("err %#v, want %#v", err, tc.wantAPI)
				}
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err %q lacks %q", err, tc.wantMsg)
			}
		})
	}
}

func TestCompleteEndsWithItsContext(t *testing.T) {
	api := newFakeAPI(t, nil)
	p := newProvider(t, OpenAIConfig{BaseURL: api.baseURL()})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, modelSlow, "hi")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want context.DeadlineExceeded", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	<-api.slowArrived // the first call's
	go func() {
		<-api.slowArrived // cancel once the server holds the second request
		cancel()
	}()
	if _, err := p.Complete(ctx, modelSlow, "hi"); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestCompleteProviderTimeout(t *testing.T) {
	api := newFakeAPI(t, nil)
	p := newProvider(t, OpenAIConfig{BaseURL: api.baseURL(), Timeout: 30 * time.Millisecond})
	if _, err := p.Complete(context.Background(), modelSlow, "hi"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want context.DeadlineExceeded", err)
	}
}

func TestCompleteUnreachableServer(t *testing.T) {
	api := newFakeAPI(t, nil)
	url := api.baseURL()
	api.srv.Close()
	p := newProvider(t, OpenAIConfig{BaseURL: url})
	_, err := p.Complete(context.Background(), "m", "hi")
	if err == nil || !strings.Contains(err.Error(), "chat completions:") {
		t.Errorf("err %v", err)
	}
}

func TestNewOpenAIProviderRejectsBadConfig(t *testing.T) {
	cases := map[string]OpenAIConfig{
		"empty URL":       {},
		"no scheme":       {BaseURL: "127.0.0.1:8000/v1"},
		"ftp":             {BaseURL: "ftp://example.com/v1"},
		"no host":         {BaseURL: "http:///v1"},
		"query":           {BaseURL: "http://example.com/v1?x=1"},
		"negative cap":    {BaseURL: "http://example.com/v1", MaxResponseBytes: -1},
		"negative tokens": {BaseURL: "http://example.com/v1", MaxTokens: -1},
	}
	for name, cfg := range cases {
		if _, err := NewOpenAIProvider(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
