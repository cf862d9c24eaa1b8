package policy

import (
	"errors"
	"fmt"
	"math"
)

// Limits on one request. A handler should cap the body at MaxRequestBytes before
// decoding; Validate then checks the fields.
const (
	// MaxRequestBytes is the body size an HTTP handler should accept for a policy or
	// containment request: room for a full prompt and output plus JSON escaping.
	MaxRequestBytes = 4 << 20
	// MaxTextBytes is the longest prompt or output Validate accepts. Only the first
	// Options.MaxScanBytes of each are scanned for patterns.
	MaxTextBytes = 1 << 20
	// MaxMetadataEntries is the most metadata keys a request may carry.
	MaxMetadataEntries = 64
	// MaxMetadataBytes is the longest metadata key or value.
	MaxMetadataBytes = 1024
)

// Request is one LLM call to check: the body of POST /api/policy/evaluate and
// POST /api/containment/evaluate.
type Request struct {
	// Model is the model the call goes to.
	Model string `json:"model"`
	// Messages are the chat messages sent to the model, the documented API's form of the
	// prompt: their contents, joined by newlines, are the prompt rules scan (see
	// MessagesText). Give messages or a prompt; a request giving both must agree.
	Messages []Message `json:"messages,omitempty"`
	// Prompt is the text sent to the model, Cairn's earlier form of messages.
	Prompt string `json:"prompt,omitempty"`
	// Output is the model's answer, when the call has run.
	Output string `json:"output,omitempty"`
	// CostUSD is the call's cost in US dollars, when known.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Metadata is free-form context (caller, team, trace id); rules do not read it.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Validate checks sizes and values: messages (or a prompt) or an output must be given,
// the prompt (or the messages' text) and the output each at most MaxTextBytes, messages
// as checkMessages says, the model name at most MaxModelNameLength bytes, cost_usd
// finite and not negative, metadata within its limits.
func (r Request) Validate() error {
	if err := r.checkMessages(); err != nil {
		return err
	}
	prompt := r.promptText()
	if prompt == "" && r.Output == "" {
		return errors.New("messages, prompt and output are all empty: give messages (or a prompt) or an output")
	}
	if len(prompt) > MaxTextBytes {
		return fmt.Errorf("prompt is %d bytes, at most %d allowed", len(prompt), MaxTextBytes)
	}
	if len(r.Output) > MaxTextBytes {
		return fmt.Errorf("output is %d bytes, at most %d allowed", len(r.Output), MaxTextBytes)
	}
	if len(r.Model) > MaxModelNameLength {
		return fmt.Errorf("model is %d bytes, at most %d allowed", len(r.Model), MaxModelNameLength)
	}
	if r.CostUSD != nil && (math.IsNaN(*r.CostUSD) || math.IsInf(*r.CostUSD, 0) || *r.CostUSD < 0) {
		return fmt.Errorf("cost_usd %v: want a finite number >= 0", *r.CostUSD)
	}
	if len(r.Metadata) > MaxMetadataEntries {
		return fmt.Errorf("metadata has %d entries, at most %d allowed", len(r.Metadata), MaxMetadataEntries)
	}
	for k, v := range r.Metadata {
		if k == "" || len(k) > MaxMetadataBytes || len(v) > MaxMetadataBytes {
			return fmt.Errorf("metadata %.40q: keys must be 1-%d bytes and values at most %d", k, MaxMetadataBytes, MaxMetadataBytes)
		}
	}
	return nil
}

// Outcome is a policy decision.
type Outcome string

// The policy outcomes.
const (
	// Allow: no deny-mode rule was hit (there may be warnings).
	Allow Outcome = "allow"
	// Deny: at least one deny-mode rule was hit.
	Deny Outcome = "deny"
)

// Decision is the result of Engine.Evaluate: the response of POST /api/policy/evaluate.
type Decision struct {
	// Decision is allow or deny.
	Decision Outcome `json:"decision"`
	// Denied is Decision == Deny; DenyRule and DenyReason are the rule id and message of
	// the first violation, nil when allowed. These are the documented API's members.
	Denied     bool    `json:"denied"`
	DenyRule   *string `json:"deny_rule"`
	DenyReason *string `json:"deny_reason"`
	// Violations are the hits of deny-mode rules, in rule order.
	Violations []Hit `json:"violations"`
	// Warnings are the hits of warn-mode rules, in rule order.
	Warnings []Hit `json:"warnings"`
	// Truncated is true when a scanned text was longer than ScanLimitBytes, so its end
	// was not scanned; TruncatedFields names those texts.
	Truncated       bool     `json:"truncated"`
	TruncatedFields []string `json:"truncated_fields,omitempty"`
	// ScanLimitBytes is how much of each text patterns looked at.
	ScanLimitBytes int `json:"scan_limit_bytes"`
	// RulesEvaluated is how many rules ran.
	RulesEvaluated int `json:"rules_evaluated"`
	// EvaluationMS is the time the evaluation took, in milliseconds.
	EvaluationMS float64 `json:"evaluation_ms"`
}

// Hit is one rule that fired.
type Hit struct {
	// Rule and Reason are the documented API's names of RuleID and Message, which
	// earlier clients read; both pairs are always set alike.
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// RuleID, Kind and Mode identify the rule.
	RuleID string `json:"rule_id"`
	Kind   Kind   `json:"kind"`
	Mode   Mode   `json:"mode"`
	// Message says what was found, without quoting sensitive text.
	Message string `json:"message"`
	// Matches are the pattern matches of a prompt_pattern rule, in text order, at most
	// Options.MaxMatchesPerRule of them; MatchesTruncated says more were left out.
	Matches          []Match `json:"matches,omitempty"`
	MatchesTruncated bool    `json:"matches_truncated,omitempty"`
}

// Match is where a pattern matched.
type Match struct {
	// Field is the text matched: prompt or output.
	Field string `json:"field"`
	// Category is the pattern's category (a custom pattern's name for custom patterns).
	Category string `json:"category"`
	// Pattern is the id of the pattern that matched.
	Pattern string `json:"pattern"`
	// Start and End are byte offsets into the field's text: the match is text[Start:End].
	Start int `json:"start"`
	End   int `json:"end"`
	// Masked is the matched text with most characters replaced by "*".
	Masked string `json:"masked"`
}
