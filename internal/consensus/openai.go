package consensus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Errors of OpenAIProvider.Complete, besides *APIError and context errors.
var (
	// ErrMalformedResponse: a 2xx body that is not the chat-completions JSON.
	ErrMalformedResponse = errors.New("malformed chat-completions response")
	// ErrEmptyChoices: a response without choices, or whose first choice has no content.
	ErrEmptyChoices = errors.New("chat-completions response has no answer")
	// ErrResponseTooLarge: a body over OpenAIConfig.MaxResponseBytes.
	ErrResponseTooLarge = errors.New("chat-completions response too large")
)

// APIError is a non-2xx answer from a chat-completions server.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's error message (error.message in OpenAI's format), or the
	// start of the body when it is not in that format.
	Message string
	// Type and Code are error.type and error.code, when the server gave them.
	Type, Code string
}

// Error says the status, the server's message and, when given, its type and code.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("chat completions: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Type != "" || e.Code != "" {
		msg += fmt.Sprintf(" (type %q, code %q)", e.Type, e.Code)
	}
	return msg
}

// Defaults of OpenAIConfig.
const (
	DefaultProviderName     = "openai"
	DefaultTimeout          = 60 * time.Second
	DefaultMaxResponseBytes = 4 << 20
	// maxErrorBodyBytes is how much of a non-2xx body is read for its message.
	maxErrorBodyBytes = 64 << 10
	// maxErrorMessageRunes bounds the message kept from a non-JSON error body.
	maxErrorMessageRunes = 300
)

// OpenAIConfig configures an OpenAIProvider.
type OpenAIConfig struct {
	// Name identifies the provider in results; DefaultProviderName when empty.
	Name string
	// BaseURL is the API root the path /chat/completions is appended to, such as
	// "https://api.example.com/v1" or "http://127.0.0.1:8000/v1". Required; http or https.
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// HTTPClient sends the requests; a client without its own timeout when nil (each
	// call's deadline comes from Timeout and the caller's context).
	HTTPClient *http.Client
	// Temperature is sent with every request; 0 when nil, for answers that repeat.
	Temperature *float64
	// MaxTokens, when positive, is sent as max_tokens.
	MaxTokens int
	// Timeout bounds each call; DefaultTimeout when 0, none when negative.
	Timeout time.Duration
	// MaxResponseBytes caps a response body; DefaultMaxResponseBytes when 0.
	MaxResponseBytes int64
}

// OpenAIProvider is a client of an OpenAI-compatible chat-completions API.
type OpenAIProvider struct {
	name, endpoint, apiKey string
	client                 *http.Client
	temperature            float64
	maxTokens              int
	timeout                time.Duration
	maxResponseBytes       int64
}

// NewOpenAIProvider checks cfg and returns a provider.
func NewOpenAIProvider(cfg OpenAIConfig) (*OpenAIProvider, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai provider: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai provider: base URL %q: want http:// or https:// and a host", cfg.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("openai provider: base URL %q: must not have a query or fragment", cfg.BaseURL)
	}
	if cfg.MaxResponseBytes < 0 || cfg.MaxTokens < 0 {
		return nil, errors.New("openai provider: MaxResponseBytes and MaxTokens must not be negative")
	}
	p := &OpenAIProvider{
		name:             cfg.Name,
		endpoint:         strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		apiKey:           cfg.APIKey,
		client:           cfg.HTTPClient,
		maxTokens:        cfg.MaxTokens,
		timeout:          cfg.Timeout,
		maxResponseBytes: cfg.MaxResponseBytes,
	}
	if p.name == "" {
		p.name = DefaultProviderName
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if cfg.Temperature != nil {
		p.temperature = *cfg.Temperature
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	if p.maxResponseBytes == 0 {
		p.maxResponseBytes = DefaultMaxResponseBytes
	}
	return p, nil
}

// Name returns the provider's name.
func (p *OpenAIProvider) Name() string { return p.name }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// Complete sends prompt to model as one user message and returns choices[0]'s content.
// Errors: *APIError for a non-2xx status, ErrResponseTooLarge, ErrMalformedResponse,
// ErrEmptyChoices, or the transport's error (which wraps ctx.Err() when the context or
// the timeout ended the call).
func (p *OpenAIProvider) Complete(ctx context.Context, model, prompt string) (Completion, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	body, err := json.Marshal(chatRequest{
		Model:       model,
		Messages:    []chatMessage{{Role: "user", Content: prompt}},
		Temperature: p.temperature,
		MaxTokens:   p.maxTokens,
	})
	if err != nil {
		return Completion{}, fmt.Errorf("chat completions: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return Completion{}, fmt.Errorf("chat completions: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return Completion{}, fmt.Errorf("chat completions: %w", err)
	}
	defer func() { _ = resp.Body.Close() }() // the body has been read or is abandoned
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Completion{}, readAPIError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, p.maxResponseBytes+1))
	if err != nil {
		return Completion{}, fmt.Errorf("chat completions: read response: %w", err)
	}
	if int64(len(data)) > p.maxResponseBytes {
		return Completion{}, fmt.Errorf("%w: over %d bytes", ErrResponseTooLarge, p.maxResponseBytes)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return Completion{}, fmt.Errorf("%w: %w", ErrMalformedResponse, err)
	}
	if len(cr.Choices) == 0 {
		return Completion{}, fmt.Errorf("%w: choices is empty", ErrEmptyChoices)
	}
	content := cr.Choices[0].Message.Content
	if content == nil {
		return Completion{}, fmt.Errorf("%w: choices[0].message.content is missing or null", ErrEmptyChoices)
	}
	return Completion{Text: *content, Model: cr.Model, Usage: cr.Usage}, nil
}

// readAPIError builds an *APIError from a non-2xx response, reading at most
// maxErrorBodyBytes of it.
func readAPIError(resp *http.Response) *APIError {
	e := &APIError{StatusCode: resp.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes)) // a short read still leaves the status
	var body struct {
		Error json.RawMessage `json:"error"`
		// Message is where some compatible servers put it instead.
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &body) == nil {
		var detail struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var text string
		switch {
		case json.Unmarshal(body.Error, &detail) == nil && detail.Message != "":
			e.Message, e.Type = detail.Message, detail.Type
			if len(detail.Code) > 0 && string(detail.Code) != "null" {
				e.Code = strings.Trim(string(detail.Code), `"`)
			}
		case json.Unmarshal(body.Error, &text) == nil && text != "":
			e.Message = text
		case body.Message != "":
			e.Message = body.Message
		}
		if e.Message != "" {
			e.Message = printable(e.Message)
			return e
		}
	}
	e.Message = printable(string(data))
	return e
}

// printable keeps the first maxErrorMessageRunes runes of s with control characters
// replaced by spaces, so an error body cannot forge log lines.
func printable(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if n == maxErrorMessageRunes {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
