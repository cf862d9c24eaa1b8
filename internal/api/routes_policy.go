package api

import (
	"fmt"
	"net/http"

	"github.com/cairn-dev/cairn/internal/policy"
)

// policyRules is the answer of GET /api/policy/rules.
type policyRules struct {
	Rules          []policy.RuleInfo     `json:"rules" doc:"the policy rules, in evaluation order"`
	Total          int                   `json:"total" doc:"how many policy rules there are (documented)" example:"9"`
	ScanLimitBytes int                   `json:"scan_limit_bytes" doc:"how much of each text patterns scan, in bytes; the rest is not looked at, and results say so" example:"65536"`
	CodeRules      []policy.CodeRuleInfo `json:"code_rules" doc:"the code-safety rules containment runs besides the policy, in order"`
}

// Enumerations of internal/policy, for the document.
var (
	policyKinds = []string{string(policy.KindModelAllowlist), string(policy.KindMaxCostPerCall),
		string(policy.KindPromptPattern), string(policy.KindMaxOutputLength)}
	policyModes     = []string{string(policy.ModeDeny), string(policy.ModeWarn)}
	policyFields    = []string{policy.FieldPrompt, policy.FieldOutput}
	severities      = []string{string(policy.SeverityNone), string(policy.SeverityLow), string(policy.SeverityMedium), string(policy.SeverityHigh), string(policy.SeverityCritical)}
	codeCategories  = []string{policy.CodeShell, policy.CodePython, policy.CodeSQL, policy.CodeReverseShell}
	policyOutcomes  = []string{string(policy.Allow), string(policy.Deny)}
	containVerdicts = []string{string(policy.VerdictAllow), string(policy.VerdictReview), string(policy.VerdictBlock)}
)

func (s *Server) policyRoutes(c *components) group {
	req := policySchemas(c)
	decision := c.Ref("PolicyDecision", "The policy's decision on a call.", policy.Decision{}, fieldDocs{
		"decision":         {Description: "deny when a deny-mode rule was hit, else allow", Enum: policyOutcomes},
		"denied":           {Description: "decision is deny"},
		"deny_rule":        {Description: "the id of the first deny-mode rule hit, in rule order; null when allowed", Nullable: true, Example: "jailbreak"},
		"deny_reason":      {Description: "that rule's message: what was found, without quoting sensitive text; null when allowed", Nullable: true, Example: "1 matches: jailbreak (1)"},
		"violations":       {Description: "hits of deny-mode rules, in rule order"},
		"warnings":         {Description: "hits of warn-mode rules, in rule order: rule and reason as documented, with Cairn's details beside them"},
		"truncated":        {Description: "a text was longer than scan_limit_bytes, so its end was not scanned"},
		"truncated_fields": {Description: "the texts that were, prompt and/or output"},
		"scan_limit_bytes": {Description: "how much of each text patterns looked at", Example: policy.DefaultMaxScanBytes},
		"rules_evaluated":  {Description: "how many rules ran", Example: 9},
		"evaluation_ms":    {Description: "time taken, milliseconds", Example: 0.08},
	})
	c.Ref("CodeFinding", "A piece of dangerous code found in a text.", policy.Finding{}, fieldDocs{
		"rule_id":     {Description: "the code rule that matched (GET /api/policy/rules lists them)", Example: "shell.rm_rf_root"},
		"category":    {Description: "the kind of code", Enum: codeCategories},
		"severity":    {Description: "how dangerous", Enum: severities[1:]},
		"description": {Description: "what was found"},
		"field":       {Description: "the text: prompt or output", Enum: policyFields},
		"start":       {Description: "byte offset of the match in the text", Example: 10},
		"end":         {Description: "byte offset just past the match", Example: 19},
		"line":        {Description: "the 1-based line of the text the match starts on", Example: 1},
	})
	c.Ref("ASTViolation", "A code-safety finding as the documented API lists it.", policy.ASTViolation{}, fieldDocs{
		"pattern":  {Description: "the code rule that matched: the finding's rule_id", Example: "shell.rm_rf_root"},
		"language": {Description: "the kind of code: the finding's category", Enum: codeCategories},
		"line":     {Description: "the 1-based line of the text the match starts on", Example: 1},
		"severity": {Description: "how dangerous", Enum: severities[1:]},
	})
	c.Ref("CodeSafety", "The dangerous-code scan of a prompt and output.", policy.CodeSafety{}, fieldDocs{
		"findings":           {Description: "findings by field (prompt first), then offset; at most 100"},
		"findings_truncated": {Description: "more findings were left out"},
		"max_severity":       {Description: "the highest severity found, or none", Enum: severities},
		"counts":             {Description: "findings per severity", Example: map[string]int{"critical": 1}},
		"truncated":          {Description: "a text was longer than the scan limit, so its end was not scanned"},
	})
	containment := c.Ref("Containment", "The containment verdict on a call: its policy decision and a dangerous-code scan.", policy.Containment{}, fieldDocs{
		"verdict": {Description: "block: the policy denies, or a finding is high or critical; review: the policy warns, a finding is medium, " +
			"or a text was only partly scanned; else allow", Enum: containVerdicts},
		"reasons":         {Description: "why the verdict is not allow, in order; empty when it is"},
		"policy":          {Description: "the policy decision on the same request"},
		"code_safety":     {Description: "the dangerous-code scan"},
		"evaluation_ms":   {Description: "time taken by both, milliseconds", Example: 0.12},
		"permitted":       {Description: "the policy did not deny the call (documented)"},
		"safe":            {Description: "no code-safety finding is critical (documented; the verdict also blocks on high)"},
		"all_clear":       {Description: "permitted and safe (documented)"},
		"sealed":          {Description: "always null: the service does not seal containment verdicts into the chain (documented)", Nullable: true, Example: nil},
		"policy_decision": {Description: "the policy's decision (documented)", Enum: policyOutcomes},
		"policy_warnings": {Description: "the policy's warnings (documented): rule and reason, with Cairn's details beside them"},
		"ast_violations":  {Description: "the code-safety findings as the documented API lists them, in the order of findings"},
	})
	rules := c.Ref("PolicyRules", "The rules a policy or containment request is checked against.", policyRules{}, nil)
	body := func(what string) *requestBody {
		return jsonBody("The call: its messages (or a prompt) and/or its output, up to 1 MiB each, and optionally the model, cost and metadata. "+what, true, req)
	}
	return group{name: "policy", description: "Check LLM calls against policy rules, and contain dangerous code.", routes: []route{
		{method: http.MethodGet, path: "/api/policy/rules", handler: http.HandlerFunc(s.policyRules), op: operation{
			id: "policyRules", summary: "The policy rules",
			description: "The rules the server was started with (--policy-rules, else the defaults), with the expressions of each pattern rule, and the code-safety rules of containment.",
			responses:   []response{jsonOK("The rules.", rules)}}},
		{method: http.MethodPost, path: "/api/policy/evaluate", handler: http.HandlerFunc(s.evaluatePolicy), op: operation{
			id: "evaluatePolicy", summary: "Check a call against the policy",
			description: "Runs every rule: model allowlists, cost ceilings, patterns (jailbreak, secrets, PII, custom RE2) and output length. " +
				"Patterns run in linear time over the first scan_limit_bytes of each text. Matched text is returned masked. A denied call is still a 200 answer.",
			body:      body("Before the call has run, give no output."),
			responses: []response{jsonOK("The decision.", decision)}}},
		{method: http.MethodPost, path: "/api/containment/evaluate", handler: http.HandlerFunc(s.contain), op: operation{
			id: "containCall", summary: "Contain a call",
			description: "Checks the call against the policy and scans its prompt and output for dangerous shell, Python, SQL and reverse-shell code, " +
				"and gives a verdict: block, review or allow. A blocked call is still a 200 answer.",
			body:      body(""),
			responses: []response{jsonOK("The verdict.", containment)}}},
	}}
}

// policySchemas registers the schemas of rules and hits, and returns the request's.
func policySchemas(c *components) *schema {
	c.Ref("ChatMessage", "One message of a chat call.", policy.Message{}, fieldDocs{
		"role":    {Description: fmt.Sprintf("who speaks: system, user, assistant, tool, ...; 1 to %d bytes; rules do not read it", policy.MaxRoleBytes), Example: "user"},
		"content": {Description: "the message's text", Example: "Summarize this contract in three sentences."},
	})
	req := c.Ref("PolicyRequest", "An LLM call to check: its messages (or a prompt), and/or its output.", policy.Request{}, fieldDocs{
		"messages": {Description: fmt.Sprintf("the chat messages sent to the model, at most %d; their contents joined by newlines are the prompt the rules scan, "+
			"and match offsets are into that text. Give messages, a prompt, an output, or several", policy.MaxMessages)},
		"model":    {Description: "the model the call goes to", Example: "gpt-4o"},
		"prompt":   {Description: "the text sent to the model, the earlier form of messages; if both are given, prompt must equal the messages' contents joined by newlines", Example: "Summarize this contract in three sentences."},
		"output":   {Description: "the model's answer, once the call has run", Example: "The contract ..."},
		"cost_usd": {Description: "the call's cost in US dollars, when known", Example: 0.012},
		"metadata": {Description: "free-form context (caller, team, trace id), at most 64 entries; rules do not read it", Example: map[string]string{"team": "billing"}},
	})
	c.Optional("PolicyRequest", "model")
	c.Ref("PatternMatch", "Where a pattern matched.", policy.Match{}, fieldDocs{
		"field":    {Description: "the text matched", Enum: policyFields},
		"category": {Description: "the pattern's category; a custom pattern's name", Example: "email"},
		"pattern":  {Description: "the pattern's id", Example: "email"},
		"start":    {Description: "byte offset of the match in the text", Example: 12},
		"end":      {Description: "byte offset just past the match", Example: 29},
		"masked":   {Description: "the matched text with most characters replaced by *", Example: "*************.com"},
	})
	c.Ref("PolicyHit", "A rule that fired.", policy.Hit{}, fieldDocs{
		"rule":              {Description: "the rule's id", Example: "pii-in-prompt"},
		"reason":            {Description: "what was found, without quoting sensitive text", Example: "1 matches: email (1)"},
		"rule_id":           {Description: "rule under its earlier name", Example: "pii-in-prompt"},
		"kind":              {Description: "the rule's kind", Enum: policyKinds},
		"mode":              {Description: "the rule's mode", Enum: policyModes},
		"message":           {Description: "reason under its earlier name", Example: "1 matches: email (1)"},
		"matches":           {Description: "a pattern rule's matches, in text order, at most 20"},
		"matches_truncated": {Description: "more matches were left out"},
	})
	c.Ref("PatternSpec", "A custom pattern of a prompt_pattern rule.", policy.PatternSpec{}, fieldDocs{
		"name":  {Description: "names the pattern in matches", Example: "internal_host"},
		"regex": {Description: "an RE2 expression (Go regexp syntax)", Example: `(?i)\b[a-z0-9-]+\.corp\.example\.com\b`},
	})
	c.Ref("PolicyParameters", "A rule's parameters; each kind uses its own.", policy.Parameters{}, fieldDocs{
		"models":     {Description: "model_allowlist: allowed model names; * matches any run of characters", Example: []string{"gpt-4o*", "claude-*"}},
		"max_usd":    {Description: "max_cost_per_call: the highest allowed cost of one call, US dollars", Example: 5},
		"max_chars":  {Description: "max_output_length: the longest allowed output, in characters", Example: 100000},
		"categories": {Description: "prompt_pattern: built-in categories: email, phone, credit_card, us_ssn, iban, api_key, jailbreak, pii", Example: []string{"api_key"}},
		"patterns":   {Description: "prompt_pattern: custom RE2 expressions"},
		"fields":     {Description: "prompt_pattern: the texts to scan, prompt and/or output; absent: prompt"},
	})
	c.Ref("PatternInfo", "One expression of a pattern rule.", policy.PatternInfo{}, fieldDocs{
		"id":          {Description: "names the pattern in matches", Example: "email"},
		"category":    {Description: "what the pattern detects", Example: "email"},
		"description": {Description: "what the pattern detects, in words"},
		"regex":       {Description: "the RE2 source of the expression"},
		"ignore_case": {Description: "the expression is matched ignoring ASCII case"},
		"check":       {Description: "a check a match must also pass, such as luhn or mod97", Example: "luhn"},
	})
	c.Ref("PolicyRule", "A policy rule.", policy.RuleInfo{}, fieldDocs{
		"id":          {Description: "names the rule in results", Example: "secrets-in-prompt"},
		"name":        {Description: "id, as the documented API calls it", Example: "secrets-in-prompt"},
		"description": {Description: "what the rule is for"},
		"kind":        {Description: "what the rule checks", Enum: policyKinds},
		"mode":        {Description: "deny: a hit denies the call; warn: a hit is a warning", Enum: policyModes},
		"parameters":  {Description: "the rule's parameters"},
		"patterns":    {Description: "the expressions a prompt_pattern rule runs, built-in and custom"},
	})
	c.Ref("CodeRule", "A code-safety rule of containment.", policy.CodeRuleInfo{}, fieldDocs{
		"id":          {Description: "names the rule in findings", Example: "shell.rm_rf_root"},
		"category":    {Description: "the kind of code", Enum: codeCategories},
		"severity":    {Description: "the severity of its findings", Enum: severities[1:]},
		"description": {Description: "what the rule finds"},
		"regexes":     {Description: "its RE2 expressions; a match of any is a finding"},
		"ignore_case": {Description: "the expressions ignore ASCII case"},
	})
	return req
}

func (s *Server) policyRules(w http.ResponseWriter, _ *http.Request) {
	rules := s.policy.Rules()
	writeJSON(w, http.StatusOK, policyRules{Rules: rules, Total: len(rules), ScanLimitBytes: s.policy.ScanLimitBytes(),
		CodeRules: policy.CodeRules()})
}

func (s *Server) evaluatePolicy(w http.ResponseWriter, r *http.Request) {
	answerPolicy(s, w, r, "policy evaluation", s.policy.Evaluate)
}

func (s *Server) contain(w http.ResponseWriter, r *http.Request) {
	answerPolicy(s, w, r, "containment", s.policy.Contain)
}

// answerPolicy decodes a policy request, runs judge on it and answers with the verdict.
// judge fails only on a request policy.Request.Validate refuses.
func answerPolicy[V any](s *Server, w http.ResponseWriter, r *http.Request, what string, judge func(policy.Request) (V, error)) {
	req, ok := s.decodePolicyRequest(w, r, what)
	if !ok {
		return
	}
	v, err := judge(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) decodePolicyRequest(w http.ResponseWriter, r *http.Request, what string) (policy.Request, bool) {
	var req policy.Request
	if err := decodeJSONLimit(w, r, &req, false, policy.MaxRequestBytes); err != nil {
		s.writeRequestError(w, r, what, err)
		return req, false
	}
	return req, true
}
