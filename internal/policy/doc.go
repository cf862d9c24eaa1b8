// Package policy checks LLM calls against rules before or after they run, and scans
// prompts for dangerous code (containment). It is the engine behind the local chain
// service's /api/policy and /api/containment routes; it does no I/O besides reading a
// rule file, and never logs.
//
// # Rules
//
// A [Rule] has an id, a description, a [Kind], a [Mode] and [Parameters]. The kinds:
//
//   - model_allowlist: the request's model must match one entry of parameters.models.
//     Matching is case-insensitive. An entry without "*" must equal the model; "*"
//     matches any run of characters (including none, "/" and "-"), so "gpt-4o*" is a
//     prefix, "*-instruct" a suffix and "meta-llama/*-70b*" a glob. No other character is
//     special. A request with no model never matches, so it is reported too.
//   - max_cost_per_call: the request's cost_usd must not exceed parameters.max_usd. A
//     request without cost_usd is not checked by this kind.
//   - prompt_pattern: the texts named by parameters.fields ("prompt", the default, and/or
//     "output") must not match any built-in pattern of parameters.categories (see
//     [Categories]: email, phone, credit_card, us_ssn, iban, api_key, jailbreak, and "pii"
//     for the first five) nor any RE2 expression in parameters.patterns.
//   - max_output_length: the output must have at most parameters.max_chars characters
//     (Unicode code points, counted over the whole output, not only the scanned part).
//
// A hit of a rule in mode "deny" is a violation and makes the decision "deny"; a hit in
// mode "warn" is a warning and leaves the decision "allow". [DefaultRules] is a starting
// set; [ParseRules] and [LoadRules] read rules from YAML or JSON.
//
// # Linear time
//
// Every pattern is a Go regular expression (RE2 syntax, no backreferences, no
// lookaround), which runs in time linear in its input: no input makes matching
// backtrack. Each text is scanned up to [Options].MaxScanBytes (64 KiB by default, cut
// at a UTF-8 boundary); a [Decision] says which fields were truncated, because anything
// past the limit was not looked at.
//
// Built-in patterns are written to be fast as well as linear. Most start with a literal
// ("ignore", "sk-", "rm"), which regexp finds with a substring search instead of stepping
// through every byte; alternatives such as "ignore|disregard" are split into one
// expression per word for that reason, and case-insensitive ones are written in lower
// case and run on an ASCII-lowered copy of the text (same offsets), since (?i) defeats
// the substring search. A word-boundary check that would also defeat it is done in Go
// instead: a match starting inside a word ("xignore") is dropped. Number-shaped patterns
// (phone, card, SSN, IBAN) are tried, anchored, only where a number starts, on a window
// as long as their longest match. Many patterns also carry a prefilter: literals one of
// which every match contains, checked before the expression runs. Tests compare these
// fast paths with plain regexp runs over random texts.
//
// Offsets in results are byte offsets into the original text. Matched text is never
// echoed back in full: each [Match] carries a masked copy in which at most the last
// quarter (and at most four characters) stays readable, and nothing at all of secrets
// and of custom patterns' matches.
//
// # Containment
//
// [Engine.Contain] combines a policy decision with a scan for dangerous shell, Python,
// SQL and reverse-shell code (see [CodeRules]) and returns a [Verdict]: block, review or
// allow, by the rule documented on [Engine.Contain].
package policy
