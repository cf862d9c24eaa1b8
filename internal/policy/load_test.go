package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const yamlRules = `
rules:
  - id: no-secrets
    description: Prompts must not carry API keys
    kind: prompt_pattern
    mode: deny
    parameters:
      categories: [api_key]
  - id: internal-hosts
    kind: prompt_pattern
    mode: warn
    parameters:
      patterns:
        - name: internal_host
          regex: '(?i)\b[a-z0-9-]+\.corp\.example\.com\b'
      fields: [prompt, output]
  - id: models
    kind: model_allowlist
    mode: deny
    parameters:
      models: ["gpt-4o*", "claude-*"]
  - id: cheap
    kind: max_cost_per_call
    mode: deny
    parameters:
      max_usd: 0
`

const jsonRules = `{"rules":[{"id":"short","kind":"max_output_length","mode":"warn","parameters":{"max_chars":5}}]}`

func TestParseRules(t *testing.T) {
	rules, err := ParseRules([]byte(yamlRules))
	if err != nil {
		t.Fatalf("ParseRules(yaml): %v", err)
	}
	if len(rules) != 4 || rules[1].Parameters.Patterns[0].Regex != `(?i)\b[a-z0-9-]+\.corp\.example\.com\b` ||
		rules[3].Parameters.MaxUSD == nil || *rules[3].Parameters.MaxUSD != 0 {
		t.Fatalf("rules %+v", rules)
	}
	e, err := New(rules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.Evaluate(Request{Model: "mistral-large", Prompt: "ask build.corp.example.com", CostUSD: usd(0.01)})
	if err != nil {
		t.Fatal(err)
	}
	if hitIDs(d.Violations) != "models,cheap" || hitIDs(d.Warnings) != "internal-hosts" {
		t.Errorf("violations [%s] warnings [%s]", hitIDs(d.Violations), hitIDs(d.Warnings))
	}

	rules, err = ParseRules([]byte(jsonRules))
	if err != nil || len(rules) != 1 || rules[0].Parameters.MaxChars != 5 {
		t.Fatalf("ParseRules(json) = %+v, %v", rules, err)
	}
}

func TestParseRulesErrors(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"not yaml":          {"rules: [", "parse rules"},
		"empty file":        {"", "no rules"},
		"empty list":        {"rules: []", "no rules"},
		"top-level list":    {"- id: a", "parse rules"},
		"unknown top field": {"rulez: []", `unknown field "rulez"`},
		"unknown rule field": {`{"rules":[{"id":"a","kind":"max_output_length","mode":"warn","severity":"x","parameters":{"max_chars":1}}]}`,
			`unknown field "severity"`},
		"unknown parameter": {`{"rules":[{"id":"a","kind":"max_output_length","mode":"warn","parameters":{"max_chars":1,"max_tokens":3}}]}`,
			`unknown field "max_tokens"`},
		"duplicate key":  {"rules:\n  - id: a\n    id: b\n    kind: max_output_length\n    mode: warn\n    parameters: {max_chars: 1}\n", `"id" already set`},
		"wrong type":     {`{"rules":[{"id":"a","kind":"max_output_length","mode":"warn","parameters":{"max_chars":"ten"}}]}`, "max_chars"},
		"invalid rule":   {`{"rules":[{"id":"a","kind":"max_output_length","mode":"deny","parameters":{}}]}`, "rule a: parameter max_chars"},
		"duplicate ids":  {`{"rules":[` + strings.Repeat(`{"id":"a","kind":"max_output_length","mode":"deny","parameters":{"max_chars":1}},`, 2) + `{"id":"b","kind":"max_output_length","mode":"deny","parameters":{"max_chars":1}}]}`, "used twice"},
		"bad regex file": {"rules:\n- id: a\n  kind: prompt_pattern\n  mode: deny\n  parameters:\n    patterns: [{name: p, regex: 'a(?<=b)'}]\n", "patterns[0] (p)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseRules([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(good, []byte(yamlRules), 0o600); err != nil {
		t.Fatal(err)
	}
	if rules, err := LoadRules(good); err != nil || len(rules) != 4 {
		t.Fatalf("LoadRules = %d rules, %v", len(rules), err)
	}
	if _, err := LoadRules(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules: []"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRules(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("invalid file error should name the file: %v", err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte("#"+strings.Repeat("x", MaxRuleFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRules(huge); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("huge file: %v", err)
	}
}

// FuzzParseRules: no input panics, and whatever parses builds an engine that evaluates.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(yamlRules))
	f.Add([]byte(jsonRules))
	f.Add([]byte("rules:\n- id: x\n  kind: prompt_pattern\n  mode: warn\n  parameters: {categories: [pii]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseRules(data)
		if err != nil {
			return
		}
		e, err := New(rules, Options{})
		if err != nil {
			t.Fatalf("ParseRules accepted rules New rejects: %v", err)
		}
		if _, err := e.Evaluate(Request{Model: "m", Prompt: string(data), Output: "o"}); err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
	})
}
