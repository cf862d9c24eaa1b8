package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxScanBytes is how much of each text patterns scan: 64 KiB.
	DefaultMaxScanBytes = 64 << 10
	// DefaultMaxMatchesPerRule is how many matches one hit lists.
	DefaultMaxMatchesPerRule = 20
)

// Options tune an engine. The zero value means the defaults.
type Options struct {
	// MaxScanBytes is how much of each text patterns scan (0: DefaultMaxScanBytes,
	// at most MaxTextBytes).
	MaxScanBytes int
	// MaxMatchesPerRule is how many matches one hit lists (0: DefaultMaxMatchesPerRule).
	MaxMatchesPerRule int
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxScanBytes == 0 {
		o.MaxScanBytes = DefaultMaxScanBytes
	}
	if o.MaxMatchesPerRule == 0 {
		o.MaxMatchesPerRule = DefaultMaxMatchesPerRule
	}
	if o.MaxScanBytes < 0 || o.MaxScanBytes > MaxTextBytes {
		return o, fmt.Errorf("options: MaxScanBytes %d: want 1-%d", o.MaxScanBytes, MaxTextBytes)
	}
	if o.MaxMatchesPerRule < 0 {
		return o, fmt.Errorf("options: MaxMatchesPerRule %d: want a positive number", o.MaxMatchesPerRule)
	}
	return o, nil
}

// Engine evaluates requests against a fixed set of rules. It is safe for concurrent use.
type Engine struct {
	rules []compiledRule
	opts  Options
}

// compiledRule is a rule ready to run.
type compiledRule struct {
	Rule
	models   []string   // model_allowlist entries, lowered
	patterns []*pattern // prompt_pattern expressions
}

// New validates and compiles rules. Ids must be unique; at most MaxRules rules.
func New(rules []Rule, opts Options) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("%d rules, at most %d allowed", len(rules), MaxRules)
	}
	e := &Engine{opts: opts}
	seen := make(map[string]bool, len(rules))
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("rule id %s: used twice", r.ID)
		}
		seen[r.ID] = true
		cr, err := compile(r)
		if err != nil {
			return nil, err
		}
		e.rules = append(e.rules, cr)
	}
	return e, nil
}

func compile(r Rule) (compiledRule, error) {
	cr := compiledRule{Rule: cloneRule(r)}
	for _, m := range r.Parameters.Models {
		cr.models = append(cr.models, strings.ToLower(m))
	}
	for _, c := range r.Parameters.Categories {
		ps, err := categoryPatterns(c)
		if err != nil {
			return cr, fmt.Errorf("rule %s: %w", r.ID, err)
		}
		cr.patterns = append(cr.patterns, ps...)
	}
	for _, ps := range r.Parameters.Patterns {
		re, err := regexp.Compile(ps.Regex)
		if err != nil {
			return cr, fmt.Errorf("rule %s: pattern %s: %w", r.ID, ps.Name, err)
		}
		cr.patterns = append(cr.patterns, &pattern{id: ps.Name, category: ps.Name, re: re})
	}
	return cr, nil
}

// cloneRule copies the slices and pointers of r, so a caller changing its rules later
// changes nothing in the engine, nor Rules' answers in the caller's.
func cloneRule(r Rule) Rule {
	p := &r.Parameters
	p.Models = slices.Clone(p.Models)
	p.Categories = slices.Clone(p.Categories)
	p.Patterns = slices.Clone(p.Patterns)
	p.Fields = slices.Clone(p.Fields)
	if p.MaxUSD != nil {
		v := *p.MaxUSD
		p.MaxUSD = &v
	}
	return r
}

// ScanLimitBytes is how much of each text the engine's patterns scan.
func (e *Engine) ScanLimitBytes() int { return e.opts.MaxScanBytes }

// Evaluate checks req against every rule, after req.Validate. The decision is deny when
// a deny-mode rule was hit, else allow.
func (e *Engine) Evaluate(req Request) (Decision, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return Decision{}, fmt.Errorf("policy request: %w", err)
	}
	texts := e.texts(req)
	d := e.evaluate(req, texts)
	d.EvaluationMS = millisSince(start)
	return d, nil
}

// texts prepares the request's non-empty texts for scanning.
func (e *Engine) texts(req Request) map[string]*text {
	texts := make(map[string]*text, 2)
	if prompt := req.promptText(); prompt != "" {
		texts[FieldPrompt] = newText(FieldPrompt, prompt, e.opts.MaxScanBytes)
	}
	if req.Output != "" {
		texts[FieldOutput] = newText(FieldOutput, req.Output, e.opts.MaxScanBytes)
	}
	return texts
}

func (e *Engine) evaluate(req Request, texts map[string]*text) Decision {
	d := Decision{
		Decision:       Allow,
		Violations:     []Hit{},
		Warnings:       []Hit{},
		ScanLimitBytes: e.opts.MaxScanBytes,
		RulesEvaluated: len(e.rules),
	}
	for _, r := range e.rules {
		hit, ok := r.check(req, texts, e.opts.MaxMatchesPerRule)
		if !ok {
			continue
		}
		hit.Rule, hit.Reason = hit.RuleID, hit.Message
		if r.Mode == ModeDeny {
			if !d.Denied {
				d.Denied, d.DenyRule, d.DenyReason = true, &hit.Rule, &hit.Reason
			}
			d.Violations = append(d.Violations, hit)
			d.Decision = Deny
		} else {
			d.Warnings = append(d.Warnings, hit)
		}
	}
	for _, f := range []string{FieldPrompt, FieldOutput} {
		if t := texts[f]; t != nil && t.truncated {
			d.Truncated = true
			d.TruncatedFields = append(d.TruncatedFields, f)
		}
	}
	return d
}

func millisSince(start time.Time) float64 {
	return float64(time.Since(start).Nanoseconds()) / 1e6
}

// RuleInfo describes a rule for GET /api/policy/rules.
type RuleInfo struct {
	// ID, Description, Kind, Mode and Parameters are the rule's, as given.
	ID          string     `json:"id"`
	Name        string     `json:"name"` // ID, under the documented API's name
	Description string     `json:"description,omitempty"`
	Kind        Kind       `json:"kind"`
	Mode        Mode       `json:"mode"`
	Parameters  Parameters `json:"parameters"`
	// Patterns are the expressions a prompt_pattern rule runs, built-in and custom.
	Patterns []PatternInfo `json:"patterns,omitempty"`
}

// Rules describes the engine's rules, in evaluation order.
func (e *Engine) Rules() []RuleInfo {
	out := make([]RuleInfo, 0, len(e.rules))
	for _, r := range e.rules {
		c := cloneRule(r.Rule)
		info := RuleInfo{ID: c.ID, Name: c.ID, Description: c.Description, Kind: c.Kind, Mode: c.Mode, Parameters: c.Parameters}
		for _, p := range r.patterns {
			info.Patterns = append(info.Patterns, p.info())
		}
		out = append(out, info)
	}
	return out
}
