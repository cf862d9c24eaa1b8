package consensus

import "context"

// Provider completes prompts with models. Implementations must be safe for concurrent
// use: Evaluate calls one provider for several models at once.
type Provider interface {
	// Name identifies the provider in results ("openai", "local-vllm").
	Name() string
	// Complete sends prompt to model as one user message and returns the answer. It
	// must return when ctx is done.
	Complete(ctx context.Context, model, prompt string) (Completion, error)
}

// Completion is one model's answer.
type Completion struct {
	// Text is the answer.
	Text string `json:"text"`
	// Model is the model the server says answered (it may name a dated version).
	Model string `json:"model,omitempty"`
	// Usage is the token count the server reported, if any.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is a server's token count for one call.
type Usage struct {
	// PromptTokens, CompletionTokens and TotalTokens are the server's usage fields.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}
