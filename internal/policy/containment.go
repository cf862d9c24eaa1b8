package policy

import (
	"fmt"
	"time"
)

// Verdict is a containment outcome.
type Verdict string

// The containment verdicts; Engine.Contain gives the rule between them.
const (
	VerdictAllow  Verdict = "allow"
	VerdictReview Verdict = "review"
	VerdictBlock  Verdict = "block"
)

// MaxFindings bounds the findings one containment result lists.
const MaxFindings = 100

// Containment is the result of Engine.Contain: the response of
// POST /api/containment/evaluate.
type Containment struct {
	// Verdict is allow, review or block.
	Verdict Verdict `json:"verdict"`
	// Reasons say, in order, why the verdict is not allow (empty when it is).
	Reasons []string `json:"reasons"`
	// Policy is the policy decision for the same request.
	Policy Decision `json:"policy"`
	// CodeSafety is the dangerous-code scan of the prompt and output.
	CodeSafety CodeSafety `json:"code_safety"`
	// EvaluationMS is the time both parts took, in milliseconds.
	EvaluationMS float64 `json:"evaluation_ms"`

	// The documented API's members, derived from the above by documented:
	//
	// Permitted is the policy's decision is not deny; Safe is no finding is critical;
	// AllClear is both. Sealed is always nil: the service does not seal containment
	// verdicts into the chain. PolicyDecision and PolicyWarnings are Policy's decision
	// and warnings; ASTViolations are CodeSafety's findings as the documented API
	// lists them.
	Permitted      bool           `json:"permitted"`
	Safe           bool           `json:"safe"`
	AllClear       bool           `json:"all_clear"`
	Sealed         *bool          `json:"sealed"`
	PolicyDecision Outcome        `json:"policy_decision"`
	PolicyWarnings []Hit          `json:"policy_warnings"`
	ASTViolations  []ASTViolation `json:"ast_violations"`
}

// ASTViolation is a code-safety finding as the documented API lists it.
type ASTViolation struct {
	// Pattern is the code rule that matched (Finding.RuleID).
	Pattern string `json:"pattern"`
	// Language is the kind of code (Finding.Category).
	Language string `json:"language"`
	// Line is the 1-based line of the match in its text (Finding.Line).
	Line int `json:"line"`
	// Severity is low, medium, high or critical.
	Severity Severity `json:"severity"`
}

// documented fills c's documented members from the others.
func (c *Containment) documented() {
	c.Permitted = c.Policy.Decision != Deny
	c.Safe = c.CodeSafety.Counts[SeverityCritical] == 0
	c.AllClear = c.Permitted && c.Safe
	c.PolicyDecision, c.PolicyWarnings = c.Policy.Decision, c.Policy.Warnings
	c.ASTViolations = make([]ASTViolation, len(c.CodeSafety.Findings))
	for i, f := range c.CodeSafety.Findings {
		c.ASTViolations[i] = ASTViolation{Pattern: f.RuleID, Language: f.Category, Line: f.Line, Severity: f.Severity}
	}
}

// CodeSafety is the dangerous-code part of a containment result.
type CodeSafety struct {
	// Findings are sorted by field (prompt first) then offset, at most MaxFindings;
	// FindingsTruncated says more were left out.
	Findings          []Finding `json:"findings"`
	FindingsTruncated bool      `json:"findings_truncated,omitempty"`
	// MaxSeverity is the highest severity found, or none.
	MaxSeverity Severity `json:"max_severity"`
	// Counts is the number of findings per severity.
	Counts map[Severity]int `json:"counts"`
	// Truncated is true when a text was longer than the scan limit (see Decision).
	Truncated bool `json:"truncated"`
}

// Contain evaluates req against the policy (as Evaluate does) and scans its prompt and
// output for dangerous code, then decides:
//
//   - block when the policy decision is deny, or any finding is high or critical;
//   - otherwise review when the policy has warnings, any finding is medium, or a text
//     was longer than the scan limit (so part of it went unchecked);
//   - otherwise allow (low findings are listed but change nothing).
func (e *Engine) Contain(req Request) (Containment, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return Containment{}, fmt.Errorf("containment request: %w", err)
	}
	texts := e.texts(req)
	policyStart := time.Now()
	c := Containment{Policy: e.evaluate(req, texts), Reasons: []string{}}
	c.Policy.EvaluationMS = millisSince(policyStart)
	c.CodeSafety = scanTexts(texts)
	c.Verdict, c.Reasons = decide(c.Policy, c.CodeSafety)
	c.documented()
	c.EvaluationMS = millisSince(start)
	return c, nil
}

// scanTexts runs the code rules over the prompt, then the output.
func scanTexts(texts map[string]*text) CodeSafety {
	cs := CodeSafety{Findings: []Finding{}, MaxSeverity: SeverityNone, Counts: map[Severity]int{}}
	for _, f := range []string{FieldPrompt, FieldOutput} {
		t := texts[f]
		if t == nil {
			continue
		}
		cs.Truncated = cs.Truncated || t.truncated
		for _, fd := range scanCode(t) {
			cs.Counts[fd.Severity]++
			if fd.Severity.rank() > cs.MaxSeverity.rank() {
				cs.MaxSeverity = fd.Severity
			}
			if len(cs.Findings) == MaxFindings {
				cs.FindingsTruncated = true
				continue
			}
			cs.Findings = append(cs.Findings, fd)
		}
	}
	return cs
}

// decide applies the rule documented on Contain.
func decide(d Decision, cs CodeSafety) (Verdict, []string) {
	var block, review []string
	if d.Decision == Deny {
		block = append(block, fmt.Sprintf("policy denied the request (%d violations)", len(d.Violations)))
	}
	if n := cs.Counts[SeverityCritical] + cs.Counts[SeverityHigh]; n > 0 {
		block = append(block, fmt.Sprintf("%d high or critical code-safety findings", n))
	}
	if len(block) > 0 {
		return VerdictBlock, block
	}
	if len(d.Warnings) > 0 {
		review = append(review, fmt.Sprintf("policy warned (%d warnings)", len(d.Warnings)))
	}
	if n := cs.Counts[SeverityMedium]; n > 0 {
		review = append(review, fmt.Sprintf("%d medium code-safety findings", n))
	}
	if d.Truncated || cs.Truncated {
		review = append(review, fmt.Sprintf("input longer than the %d-byte scan limit was only partly checked", d.ScanLimitBytes))
	}
	if len(review) > 0 {
		return VerdictReview, review
	}
	return VerdictAllow, []string{}
}
