package policy

import (
	"errors"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

// MaxRuleFileBytes is the largest rule file LoadRules reads.
const MaxRuleFileBytes = 1 << 20

// RuleFile is the layout of a rule file, in YAML or JSON:
//
//	rules:
//	  - id: no-secrets
//	    description: Prompts must not carry API keys
//	    kind: prompt_pattern
//	    mode: deny
//	    parameters:
//	      categories: [api_key]
//	  - id: internal-hosts
//	    kind: prompt_pattern
//	    mode: warn
//	    parameters:
//	      patterns:
//	        - name: internal_host
//	          regex: '(?i)\b[a-z0-9-]+\.corp\.example\.com\b'
//	      fields: [prompt, output]
type RuleFile struct {
	// Rules replace the default rules entirely; start from DefaultRules in Go to extend
	// them instead.
	Rules []Rule `json:"rules"`
}

// ParseRules reads a rule file's content (YAML or JSON; JSON is YAML) strictly: unknown
// fields and duplicate keys are errors, and every rule must pass Rule.Validate with a
// unique id. An empty rule list is an error, since it would allow everything silently.
func ParseRules(data []byte) ([]Rule, error) {
	var f RuleFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	if len(f.Rules) == 0 {
		return nil, errors.New("parse rules: no rules: want a top-level \"rules\" list with at least one rule")
	}
	if _, err := New(f.Rules, Options{}); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	return f.Rules, nil
}

// LoadRules reads and parses the rule file at path (at most MaxRuleFileBytes).
func LoadRules(path string) ([]Rule, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	defer func() { _ = fh.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(fh, MaxRuleFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load rules %s: %w", path, err)
	}
	if len(data) > MaxRuleFileBytes {
		return nil, fmt.Errorf("load rules %s: file is over %d bytes", path, MaxRuleFileBytes)
	}
	rules, err := ParseRules(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, nil
}
