package audit

import (
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Verdicts of a Report.
const (
	Passed  = "passed"
	Partial = "partial"
	Failed  = "failed"
)

// Check is one line of an audit: what it is about (Subject) and the check.
type Check struct {
	Subject string `json:"subject"`
	protocol.Check
	// Err is the failure's error, for the exit status; nil for a pass or a skip.
	Err error `json:"-"`
	// Beyond marks a skipped check no auditor can make (it needs the chain's HMAC
	// secret): shown, but not what makes an audit partial.
	Beyond bool `json:"beyond_audit,omitempty"`
}

// Report is every check of an audit and its verdict.
type Report struct {
	AnchorID string `json:"anchor_id,omitempty"`
	// Verdict is Passed (every check made holds and none was skipped), Partial (none
	// failed, some were not made: NotChecked says which) or Failed. Finish sets it.
	Verdict string `json:"verdict"`
	// Passed is Verdict == Passed.
	Passed bool    `json:"passed"`
	Checks []Check `json:"checks"`
	// Failures counts the checks that do not hold; NotChecked names, "subject: check",
	// those not made.
	Failures   int      `json:"failures"`
	NotChecked []string `json:"not_checked"`
}

// Add appends c about subject, failed with err (nil for a pass or a skip).
func (r *Report) Add(subject string, c protocol.Check, err error) {
	r.Checks = append(r.Checks, Check{Subject: subject, Check: c, Err: err})
}

// Beyond appends c, a check skipped because it needs what no auditor holds (the chain's
// HMAC secret): shown, not counted as left out.
func (r *Report) Beyond(subject string, c protocol.Check) {
	r.Checks = append(r.Checks, Check{Subject: subject, Check: c, Beyond: true})
}

// Pass appends a check that holds.
func (r *Report) Pass(subject, name, detail string) {
	r.Add(subject, protocol.Check{Name: name, OK: true, Detail: detail}, nil)
}

// Skip appends a check not made, detail saying why.
func (r *Report) Skip(subject, name, detail string) {
	r.Add(subject, protocol.Check{Name: name, Skipped: true, Detail: detail}, nil)
}

// Fail appends a check that does not hold.
func (r *Report) Fail(subject, name string, err error) {
	r.Add(subject, protocol.Check{Name: name, Detail: err.Error()}, err)
}

// Finish sets the verdict from the checks.
func (r *Report) Finish() {
	r.Failures, r.NotChecked = 0, []string{}
	if r.Checks == nil {
		r.Checks = []Check{}
	}
	for _, c := range r.Checks {
		switch {
		case c.Skipped && c.Beyond:
		case c.Skipped:
			r.NotChecked = append(r.NotChecked, c.Subject+": "+c.Name)
		case !c.OK:
			r.Failures++
		}
	}
	switch {
	case r.Failures > 0:
		r.Verdict = Failed
	case len(r.NotChecked) > 0:
		r.Verdict = Partial
	default:
		r.Verdict = Passed
	}
	r.Passed = r.Verdict == Passed
}

// Summary is the verdict's line: "AUDIT PASSED  <anchor>: every check holds (n checks)",
// "AUDIT PARTIAL ...: n checks hold, m not made", "AUDIT FAILED ...: n checks do not hold".
func (r *Report) Summary() string {
	switch r.Verdict {
	case Failed:
		return fmt.Sprintf("AUDIT FAILED  %s: %s not hold", r.AnchorID, plural(r.Failures, "check does", "checks do"))
	case Partial:
		return fmt.Sprintf("AUDIT PARTIAL %s: every check made holds, %s not made (above: skipped); not a pass",
			r.AnchorID, plural(len(r.NotChecked), "check was", "checks were"))
	default:
		return fmt.Sprintf("AUDIT PASSED  %s: every check holds (%s)", r.AnchorID, plural(len(r.Checks), "check", "checks"))
	}
}

// plural is "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
