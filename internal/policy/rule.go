package policy

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
)

// Kind names what a rule checks.
type Kind string

// The rule kinds; the package comment describes each.
const (
	KindModelAllowlist  Kind = "model_allowlist"
	KindMaxCostPerCall  Kind = "max_cost_per_call"
	KindPromptPattern   Kind = "prompt_pattern"
	KindMaxOutputLength Kind = "max_output_length"
)

// Mode says what a hit of a rule does to the decision.
type Mode string

// The rule modes.
const (
	// ModeDeny makes a hit a violation: the decision becomes deny.
	ModeDeny Mode = "deny"
	// ModeWarn makes a hit a warning: the decision is not changed.
	ModeWarn Mode = "warn"
)

// The texts a prompt_pattern rule can scan.
const (
	FieldPrompt = "prompt"
	FieldOutput = "output"
)

// Limits on rule definitions, so that a rule file cannot make the engine slow or huge.
const (
	// MaxRules is the most rules one engine holds.
	MaxRules = 256
	// MaxPatternsPerRule is the most custom patterns one prompt_pattern rule holds.
	MaxPatternsPerRule = 64
	// MaxRegexLength is the longest custom pattern source, in bytes.
	MaxRegexLength = 1024
	// MaxModelsPerRule is the most entries one model_allowlist holds.
	MaxModelsPerRule = 1024
	// MaxModelNameLength is the longest model name or allowlist entry, in bytes.
	MaxModelNameLength = 256
)

// Rule is one policy rule, as loaded from a file or built in Go.
type Rule struct {
	// ID names the rule in results: 1 to 64 characters of a-z, 0-9, ".", "_" and "-",
	// starting with a letter or digit, unique within an engine.
	ID string `json:"id"`
	// Description says in a sentence what the rule is for.
	Description string `json:"description,omitempty"`
	// Kind is what the rule checks.
	Kind Kind `json:"kind"`
	// Mode is deny or warn.
	Mode Mode `json:"mode"`
	// Parameters configure the check; only the fields of the rule's kind may be set.
	Parameters Parameters `json:"parameters"`
}

// Parameters configure a rule. Each kind uses its own fields and rejects the others.
type Parameters struct {
	// Models (model_allowlist) are the allowed model names or "*" globs.
	Models []string `json:"models,omitempty"`
	// MaxUSD (max_cost_per_call) is the highest allowed cost of one call, in US dollars.
	MaxUSD *float64 `json:"max_usd,omitempty"`
	// MaxChars (max_output_length) is the longest allowed output, in characters.
	MaxChars int `json:"max_chars,omitempty"`
	// Categories (prompt_pattern) are built-in pattern categories; see Categories.
	Categories []string `json:"categories,omitempty"`
	// Patterns (prompt_pattern) are custom RE2 expressions.
	Patterns []PatternSpec `json:"patterns,omitempty"`
	// Fields (prompt_pattern) are the texts to scan: "prompt" and/or "output". Empty
	// means prompt only.
	Fields []string `json:"fields,omitempty"`
}

// PatternSpec is a custom pattern of a prompt_pattern rule.
type PatternSpec struct {
	// Name identifies the pattern in matches (it is reported as the match's category).
	Name string `json:"name"`
	// Regex is an RE2 expression (Go regexp syntax); prefix it with (?i) to ignore case.
	Regex string `json:"regex"`
}

var ruleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Validate checks the rule on its own: its id, kind and mode, and that its parameters
// suit its kind. It compiles custom patterns to check them. It does not check that ids
// are unique across rules; New does.
func (r Rule) Validate() error {
	if !ruleIDPattern.MatchString(r.ID) {
		return fmt.Errorf("rule id %q: want 1-64 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit", r.ID)
	}
	if r.Mode != ModeDeny && r.Mode != ModeWarn {
		return fmt.Errorf("rule %s: mode %q: want %q or %q", r.ID, r.Mode, ModeDeny, ModeWarn)
	}
	if err := r.Parameters.validateFor(r.Kind); err != nil {
		return fmt.Errorf("rule %s: %w", r.ID, err)
	}
	return nil
}

// validateFor checks that exactly the parameters of kind are set, and well.
func (p Parameters) validateFor(kind Kind) error {
	set := map[string]bool{
		"models":     len(p.Models) > 0,
		"max_usd":    p.MaxUSD != nil,
		"max_chars":  p.MaxChars != 0,
		"categories": len(p.Categories) > 0,
		"patterns":   len(p.Patterns) > 0,
		"fields":     len(p.Fields) > 0,
	}
	var allowed []string
	switch kind {
	case KindModelAllowlist:
		allowed = []string{"models"}
	case KindMaxCostPerCall:
		allowed = []string{"max_usd"}
	case KindMaxOutputLength:
		allowed = []string{"max_chars"}
	case KindPromptPattern:
		allowed = []string{"categories", "patterns", "fields"}
	default:
		return fmt.Errorf("kind %q: want one of %s, %s, %s, %s", kind,
			KindModelAllowlist, KindMaxCostPerCall, KindPromptPattern, KindMaxOutputLength)
	}
	for _, name := range []string{"models", "max_usd", "max_chars", "categories", "patterns", "fields"} {
		if set[name] && !slices.Contains(allowed, name) {
			return fmt.Errorf("parameter %s does not apply to kind %s", name, kind)
		}
	}
	switch kind {
	case KindModelAllowlist:
		return validateModels(p.Models)
	case KindMaxCostPerCall:
		if p.MaxUSD == nil || math.IsNaN(*p.MaxUSD) || math.IsInf(*p.MaxUSD, 0) || *p.MaxUSD < 0 {
			return errors.New("parameter max_usd: want a finite number >= 0")
		}
	case KindMaxOutputLength:
		if p.MaxChars <= 0 {
			return fmt.Errorf("parameter max_chars: want a positive number, got %d", p.MaxChars)
		}
	case KindPromptPattern:
		return p.validatePatterns()
	}
	return nil
}

func validateModels(models []string) error {
	if len(models) == 0 {
		return errors.New("parameter models: want at least one model")
	}
	if len(models) > MaxModelsPerRule {
		return fmt.Errorf("parameter models: %d entries, at most %d allowed", len(models), MaxModelsPerRule)
	}
	for i, m := range models {
		if m == "" || len(m) > MaxModelNameLength {
			return fmt.Errorf("parameter models[%d]: want 1-%d bytes, got %d", i, MaxModelNameLength, len(m))
		}
	}
	return nil
}

func (p Parameters) validatePatterns() error {
	if len(p.Categories) == 0 && len(p.Patterns) == 0 {
		return errors.New("want at least one of parameters categories and patterns")
	}
	for _, c := range p.Categories {
		if _, err := categoryPatterns(c); err != nil {
			return fmt.Errorf("parameter categories: %w", err)
		}
	}
	if len(p.Patterns) > MaxPatternsPerRule {
		return fmt.Errorf("parameter patterns: %d entries, at most %d allowed", len(p.Patterns), MaxPatternsPerRule)
	}
	for i, ps := range p.Patterns {
		if ps.Name == "" {
			return fmt.Errorf("parameter patterns[%d]: name is empty", i)
		}
		if len(ps.Regex) == 0 || len(ps.Regex) > MaxRegexLength {
			return fmt.Errorf("parameter patterns[%d] (%s): regex must be 1-%d bytes", i, ps.Name, MaxRegexLength)
		}
		if _, err := regexp.Compile(ps.Regex); err != nil {
			return fmt.Errorf("parameter patterns[%d] (%s): %w", i, ps.Name, err)
		}
	}
	for i, f := range p.Fields {
		if f != FieldPrompt && f != FieldOutput {
			return fmt.Errorf("parameter fields: %q: want %q or %q", f, FieldPrompt, FieldOutput)
		}
		if slices.Contains(p.Fields[:i], f) {
			return fmt.Errorf("parameter fields: %q listed twice", f)
		}
	}
	return nil
}

// fieldsOrDefault returns the fields a prompt_pattern rule scans.
func (p Parameters) fieldsOrDefault() []string {
	if len(p.Fields) == 0 {
		return []string{FieldPrompt}
	}
	return p.Fields
}
