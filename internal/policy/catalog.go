package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The built-in pattern categories of prompt_pattern rules.
const (
	CategoryEmail      = "email"
	CategoryPhone      = "phone"
	CategoryCreditCard = "credit_card"
	CategoryUSSSN      = "us_ssn"
	CategoryIBAN       = "iban"
	CategoryAPIKey     = "api_key"
	CategoryJailbreak  = "jailbreak"
	// CategoryPII stands for email, phone, credit_card, us_ssn and iban together.
	CategoryPII = "pii"
)

var piiCategories = []string{CategoryEmail, CategoryPhone, CategoryCreditCard, CategoryUSSSN, CategoryIBAN}

// builtins holds every built-in pattern, grouped by category in the order they run.
var builtins = buildCatalog()

// Byte sets for def.first.
const (
	digits = "0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

func buildCatalog() map[string][]*pattern {
	defs := []def{
		{id: "email", category: CategoryEmail, description: "e-mail address",
			exprs:      []string{`@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`},
			extendLeft: "abcdefghijklmnopqrstuvwxyz" + upper + digits + "._%+-"},
		{id: "phone_nanp", category: CategoryPhone, needDigit: true, wordStart: true, window: 18, first: digits + "(+", quick: digitCountAtLeast(10),
			description: "North American phone number with separators, e.g. (555) 123-4567, 555-123-4567, +1 555 123 4567",
			exprs:       []string{`(?:\+1[ .-]?|\b1[ .-])?(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[ .-]\d{4}\b`}},
		{id: "phone_international", category: CategoryPhone, needDigit: true,
			description: "international phone number starting with +country code other than +1, 8-15 digits (E.164)",
			exprs:       []string{`\+[2-9]\d{0,2}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4}\b`},
			check:       digitCountBetween(8, 15), checkName: "e164_length"},
		{id: "credit_card", category: CategoryCreditCard, needDigit: true, wordStart: true, window: 38, first: digits, quick: digitCountAtLeast(13),
			description: "payment card number: 13-19 digits, optionally grouped by spaces or dashes, passing the Luhn check",
			exprs:       []string{`\b(?:\d[ -]?){12,18}\d\b`},
			check:       luhnCard, checkName: "luhn"},
		{id: "us_ssn", category: CategoryUSSSN, needDigit: true, anchors: []string{"-"}, wordStart: true, window: 12, first: digits, quick: ssnShape,
			description: "US social security number ddd-dd-dddd, excluding area 000, 666 and 900-999, group 00 and serial 0000",
			exprs:       []string{`\b\d{3}-\d{2}-\d{4}\b`},
			check:       validSSN, checkName: "ssn_ranges"},
		{id: "iban", category: CategoryIBAN, needDigit: true, wordStart: true, window: 44, first: upper, quick: ibanShape,
			description: "IBAN: country code, check digits and 11-30 letters or digits, optionally in groups of four, passing the ISO 13616 mod-97 check",
			exprs:       []string{`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`},
			check:       validIBAN, checkName: "mod97"},
	}
	defs = append(defs, secretDefs()...)
	defs = append(defs, jailbreakDefs()...)
	byCategory := make(map[string][]*pattern)
	for _, d := range defs {
		byCategory[d.category] = append(byCategory[d.category], d.build()...)
	}
	return byCategory
}

// verbs builds one expression per leading word, word + rest, so that each expression
// starts with a literal where "(?:word1|word2)rest" would start with none.
func verbs(rest string, words ...string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w + rest
	}
	return out
}

func secretDefs() []def {
	secret := func(id, description string, exprs ...string) def {
		return def{id: id, category: CategoryAPIKey, description: description, exprs: exprs, wordStart: true, secret: true}
	}
	assignment := secret("secret_assignment", "a value of 8+ characters assigned to api_key, token, secret, password or alike",
		verbs(`\b["']?\s*[:=]\s*["']?[a-z0-9_\-./+=!@#$%^&*]{8,}`,
			`api[_-]?key`, `secret[_-]?key`, `access[_-]?token`, `auth[_-]?token`, `client[_-]?secret`, `passw(?:or)?d`)...)
	assignment.lower = true
	assignment.anchors = []string{"=", ":"}
	return []def{
		secret("openai_key", "OpenAI-style secret key sk-...", `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`),
		secret("aws_access_key_id", "AWS access key id AKIA.../ASIA...", `AKIA[0-9A-Z]{16}\b`, `ASIA[0-9A-Z]{16}\b`),
		secret("github_token", "GitHub token ghp_/gho_/ghu_/ghs_/ghr_ or github_pat_",
			`gh[pousr]_[A-Za-z0-9]{36,}\b`, `github_pat_[A-Za-z0-9_]{22,}\b`),
		secret("slack_token", "Slack token xox?-...", `xox[abposr]-[A-Za-z0-9-]{10,}`),
		secret("google_api_key", "Google API key AIza...", `AIza[0-9A-Za-z_-]{35}`),
		secret("stripe_key", "Stripe live or test key", `sk_(?:live|test)_[0-9A-Za-z]{16,}`, `rk_(?:live|test)_[0-9A-Za-z]{16,}`),
		secret("private_key_block", "PEM private key header", `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`),
		assignment,
	}
}

func jailbreakDefs() []def {
	jb := func(id, description string, anchors []string, exprs ...string) def {
		return def{id: id, category: CategoryJailbreak, description: description, exprs: exprs, lower: true, wordStart: true, anchors: anchors}
	}
	return []def{
		jb("ignore_instructions", "asks to ignore, disregard or override earlier or system instructions",
			[]string{"instructions", "prompt", "rules", "directives", "guidelines", "messages"},
			verbs(`\s+(?:(?:all|any|the|your|of|these|those)\s+)*(?:previous|prior|above|earlier|preceding|system|original)\s+(?:instructions|prompts?|rules|directives|guidelines|messages)\b`,
				"ignore", "disregard", "forget", "override")...),
		jb("do_anything_now", `"DAN" / "do anything now" persona`, []string{"anything", "dan"},
			`do\s+anything\s+now\b`, `dan\s+mode\b`, `you\s+are\s+(?:now\s+)?dan\b`),
		jb("special_mode", "asks for a developer, god or unrestricted mode", []string{"mode"},
			verbs(`\s+mode\b`, "developer", "god", "jailbreak", "unrestricted", "unfiltered")...),
		jb("jailbreak_word", "names jailbreaking outright", nil, `jailbr(?:eak|eaking|eaked|oken)\b`),
		jb("no_restrictions", "asks the model to act, in the same sentence, without restrictions, filters or rules",
			[]string{"restrictions", "limitations", "limits", "filters", "rules", "guidelines", "censorship", "ethics", "morals"},
			verbs(`\b[^.\n]*?\b(?:without|no|free\s+of|ignoring)\s+(?:any\s+)?(?:restrictions|limitations|limits|filters|rules|guidelines|censorship|ethics|morals)\b`,
				"pretend", "act", "behave", "respond", "answer")...),
		jb("prompt_extraction", "asks to reveal the system prompt or hidden instructions", []string{"system", "hidden", "initial"},
			verbs(`\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+(?:instructions|prompt)|initial\s+instructions)\b`,
				"reveal", "show", "print", "repeat", "output", "leak", "tell")...),
		jb("bypass_safety", "asks to bypass or disable safety filters", []string{"safety", "content", "security", "moderation"},
			verbs(`\s+(?:(?:your|the|all|any)\s+)*(?:safety|content|security|moderation)\s+(?:filters?|restrictions|guidelines|policies|guardrails|measures|systems?)\b`,
				"bypass", "disable", `turn\s+off`, "circumvent", "evade")...),
	}
}

// categoryPatterns returns the patterns of a category name, expanding "pii".
func categoryPatterns(name string) ([]*pattern, error) {
	if name == CategoryPII {
		var out []*pattern
		for _, c := range piiCategories {
			out = append(out, builtins[c]...)
		}
		return out, nil
	}
	ps, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("unknown category %q (known: %s)", name, strings.Join(categoryNames(), ", "))
	}
	return ps, nil
}

// categoryNames lists every category a rule may name, sorted.
func categoryNames() []string {
	names := append(slices.Collect(maps.Keys(builtins)), CategoryPII)
	slices.Sort(names)
	return names
}

// PatternInfo describes one pattern for introspection.
type PatternInfo struct {
	// ID names the pattern; matches report it.
	ID string `json:"id"`
	// Category is what the pattern detects.
	Category string `json:"category"`
	// Description says what the pattern detects.
	Description string `json:"description,omitempty"`
	// Regex is the RE2 source of the expression.
	Regex string `json:"regex"`
	// IgnoreCase says the expression is matched ignoring ASCII case (it is written in
	// lower case).
	IgnoreCase bool `json:"ignore_case,omitempty"`
	// Check names the check a match must also pass ("luhn", "mod97", ...), if any.
	Check string `json:"check,omitempty"`
}

func (p *pattern) info() PatternInfo {
	return PatternInfo{ID: p.id, Category: p.category, Description: p.description, Regex: p.re.String(), IgnoreCase: p.lower, Check: p.checkName}
}

// CategoryInfo describes one built-in category and its patterns.
type CategoryInfo struct {
	// Name is what a rule lists in parameters.categories.
	Name string `json:"name"`
	// Patterns are the category's patterns (for "pii", those of its five categories).
	Patterns []PatternInfo `json:"patterns"`
}

// Categories describes every built-in pattern category, sorted by name, "pii" included.
func Categories() []CategoryInfo {
	names := categoryNames()
	out := make([]CategoryInfo, 0, len(names))
	for _, n := range names {
		ps, _ := categoryPatterns(n) // every name comes from the catalogue
		info := CategoryInfo{Name: n}
		for _, p := range ps {
			info.Patterns = append(info.Patterns, p.info())
		}
		out = append(out, info)
	}
	return out
}
