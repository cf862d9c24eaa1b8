package policy

import (
	"slices"
	"sort"
	"strings"
)

// Severity ranks a code-safety finding.
type Severity string

// The severities, lowest first. SeverityNone is CodeSafety.MaxSeverity without findings.
const (
	SeverityNone     Severity = "none"
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// rank orders severities: none 0 ... critical 4.
func (s Severity) rank() int {
	switch s {
	case SeverityLow:
		return 1
	case SeverityMedium:
		return 2
	case SeverityHigh:
		return 3
	case SeverityCritical:
		return 4
	}
	return 0
}

// The code-safety categories.
const (
	CodeShell        = "shell"
	CodePython       = "python"
	CodeSQL          = "sql"
	CodeReverseShell = "reverse_shell"
)

// codeRule is one code-safety rule.
type codeRule struct {
	def
	severity Severity
}

// code builds a code rule. Shell and Python rules match case-sensitively, as those
// languages do; SQL rules ignore case (lower: true, written in lower case).
func code(id, category string, severity Severity, description string, exprs ...string) codeRule {
	return codeRule{def: def{id: id, category: category, description: description, exprs: exprs, wordStart: true}, severity: severity}
}

func (r codeRule) withAnchors(anchors ...string) codeRule { r.anchors = anchors; return r }
func (r codeRule) ignoringCase() codeRule                 { r.lower = true; return r }
func (r codeRule) withCheck(name string, check func(string) bool) codeRule {
	r.check, r.checkName = check, name
	return r
}

// rmRecursive is the start of a recursive rm: flags in any order, one of them -r, -R,
// a cluster holding r or R, or --recursive.
const rmRecursive = `rm\s+(?:-{1,2}[A-Za-z-]+\s+)*(?:-[A-Za-z]*[rR][A-Za-z]*|--recursive)(?:\s+-{1,2}[A-Za-z-]+)*\s+`

// codeRules lists what Contain looks for, by category. Every expression is RE2 and
// starts with a literal; anchors, where given, are a prefilter on the lowered text.
var codeRules = []codeRule{
	code("shell.rm_rf_root", CodeShell, SeverityCritical, "recursive rm of /, /*, ~ or $HOME",
		`(?m)`+rmRecursive+`(?:/\*?|~/?|\$HOME/?|"/"|'/')(?:[\s;&|)'"\x60]|$)`).withAnchors("/", "~", "$home"),
	code("shell.rm_rf_path", CodeShell, SeverityHigh, "recursive rm of an absolute path",
		rmRecursive+`/[A-Za-z_.]`).withAnchors("/"),
	code("shell.pipe_to_shell", CodeShell, SeverityHigh, "downloads a script and pipes it into a shell",
		verbs(`\b[^\n|]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|k|da|fi)?sh\b`, "curl", "wget")...).withAnchors("|"),
	code("shell.chmod_777", CodeShell, SeverityMedium, "makes files world-writable (chmod 777)",
		`chmod\s+(?:-[A-Za-z]+\s+)*0?777\b`).withAnchors("777"),
	code("shell.fork_bomb", CodeShell, SeverityCritical, "fork bomb",
		`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`, `while\s+(?:True|1)\s*:\s*os\.fork\(\)`).withAnchors("|", "fork"),
	code("shell.mkfs", CodeShell, SeverityCritical, "formats a block device (mkfs)",
		`mkfs(?:\.[A-Za-z0-9]+)?\s+(?:-\S+\s+)*/dev/\S+`).withAnchors("/dev/"),
	code("shell.dd_to_device", CodeShell, SeverityCritical, "dd writing onto a disk device",
		`dd\s+[^\n]*\bof=/dev/(?:sd|hd|nvme|xvd|vd|mmcblk|disk|mapper/|md|dm-|loop)`).withAnchors("of=/dev/"),
	code("shell.redirect_to_device", CodeShell, SeverityCritical, "shell redirection onto a disk device",
		`>\s*/dev/(?:sd[a-z]|hd[a-z]|nvme\d|xvd[a-z]|vd[a-z]|mmcblk\d)`).withAnchors("/dev/"),

	code("python.os_system", CodePython, SeverityMedium, "runs a shell command (os.system / os.popen)",
		`os\.(?:system|popen)\s*\(`),
	code("python.subprocess_shell", CodePython, SeverityHigh, "subprocess with shell=True",
		`subprocess\.\w+\s*\([^\n]*\bshell\s*=\s*True\b`).withAnchors("shell"),
	code("python.eval_input", CodePython, SeverityHigh, "eval/exec of user input, request data, argv or environment",
		verbs(`\s*\(\s*(?:input\s*\(|raw_input\s*\(|sys\.stdin|sys\.argv|os\.environ|(?:flask\.)?request\.)`, "eval", "exec")...).withAnchors("input", "stdin", "argv", "environ", "request."),
	code("python.eval", CodePython, SeverityMedium, "eval/exec of a dynamic string",
		`eval\s*\(`, `exec\s*\(`),
	code("python.pickle_loads", CodePython, SeverityHigh, "unpickles data (pickle.load/loads), which can run code",
		verbs(`\.loads?\s*\(`, "pickle", "cPickle", "_pickle", "dill")...).withAnchors(".load"),
	code("python.dunder_import_os", CodePython, SeverityHigh, "__import__('os') or __import__('subprocess')",
		`__import__\s*\(\s*['"](?:os|subprocess|pty)['"]\s*\)`),

	code("sql.drop", CodeSQL, SeverityHigh, "DROP TABLE / DATABASE / SCHEMA",
		`drop\s+(?:table|database|schema)\b`).ignoringCase(),
	code("sql.truncate", CodeSQL, SeverityMedium, "TRUNCATE TABLE",
		`truncate\s+table\b`).ignoringCase(),
	code("sql.delete_without_where", CodeSQL, SeverityMedium, "DELETE FROM a table with no WHERE clause",
		`(?m)delete\s+from\s+[\w."]+\s*(?:;|$)`).ignoringCase(),
	code("sql.stacked_query", CodeSQL, SeverityHigh, "closes a quote and stacks a destructive statement (injection)",
		verbs(`\s*\)?\s*;\s*(?:drop|delete|update|insert|alter|shutdown|exec|truncate)\b`, `'`, `"`)...).ignoringCase().withAnchors(";"),
	code("sql.tautology", CodeSQL, SeverityHigh, "quote-closing tautology such as ' OR 1=1 (injection)",
		verbs(`\s*(?:or|and)\s+['"]?\w+['"]?\s*=\s*['"]?\w+`, `'`, `"`)...).ignoringCase().withAnchors("=").withCheck("same_operands", sqlTautology),
	code("sql.comment_terminator", CodeSQL, SeverityMedium, "statement end followed by a comment (; --), an injection shape",
		`;\s*--`),
	code("sql.union_select", CodeSQL, SeverityMedium, "UNION SELECT",
		`union\s+(?:all\s+)?select\b`).ignoringCase(),

	code("reverse_shell.netcat_exec", CodeReverseShell, SeverityCritical, "netcat running a shell for a remote peer (nc -e / -c)",
		verbs(`(?:\.\w+)?\s+[^\n]*?(?:-[A-Za-z]*[ec]\s*\S*(?:sh|bash|cmd(?:\.exe)?|powershell)\b|--(?:exec|sh-exec)\b)`, "nc", "ncat", "netcat")...).withAnchors("sh", "cmd", "exec"),
	code("reverse_shell.dev_tcp", CodeReverseShell, SeverityCritical, "bash /dev/tcp or /dev/udp connection",
		`/dev/(?:tcp|udp)/[^\s/]+/\d+`),
	code("reverse_shell.mkfifo_nc", CodeReverseShell, SeverityCritical, "named pipe wired to netcat",
		`mkfifo\b[^\n]*\|\s*(?:nc|ncat|netcat)\b`).withAnchors("|"),
	code("reverse_shell.socket_dup2", CodeReverseShell, SeverityCritical, "socket file descriptors duplicated onto stdin/stdout (os.dup2)",
		`os\.dup2\s*\(\s*\w+\.fileno\(\)`),
}

// codePattern is one compiled expression of a code rule.
type codePattern struct {
	*pattern
	severity Severity
}

var codePatterns = func() []codePattern {
	var out []codePattern
	for _, r := range codeRules {
		for _, p := range r.build() {
			out = append(out, codePattern{pattern: p, severity: r.severity})
		}
	}
	return out
}()

// CodeRuleInfo describes one code-safety rule.
type CodeRuleInfo struct {
	// ID names the rule in findings; Category, Severity and Description are its
	// findings'.
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Severity    Severity `json:"severity"`
	Description string   `json:"description"`
	// Regexes are the rule's RE2 expressions; a match of any is a finding.
	Regexes []string `json:"regexes"`
	// IgnoreCase says the expressions ignore ASCII case (they are written in lower case).
	IgnoreCase bool `json:"ignore_case,omitempty"`
}

// CodeRules describes every code-safety rule Contain runs, in order.
func CodeRules() []CodeRuleInfo {
	out := make([]CodeRuleInfo, len(codeRules))
	for i, r := range codeRules {
		out[i] = CodeRuleInfo{ID: r.id, Category: r.category, Severity: r.severity, Description: r.description,
			Regexes: slices.Clone(r.exprs), IgnoreCase: r.lower}
	}
	return out
}

// Finding is one piece of dangerous code found in a text.
type Finding struct {
	// RuleID names the code rule (see CodeRules).
	RuleID string `json:"rule_id"`
	// Category is shell, python, sql or reverse_shell.
	Category string `json:"category"`
	// Severity is low, medium, high or critical.
	Severity Severity `json:"severity"`
	// Description says what was found.
	Description string `json:"description"`
	// Field is the text scanned: prompt or output.
	Field string `json:"field"`
	// Start and End are byte offsets of the match in the field's text.
	Start int `json:"start"`
	End   int `json:"end"`
	// Line is the 1-based line of the field's text the match starts on.
	Line int `json:"line"`
}

// scanCode runs every code rule over t. Where several rules match at the same offset,
// only the most severe finding is kept (the first listed, between equals). Findings come
// back sorted by offset.
func scanCode(t *text) []Finding {
	best := map[int]int{} // start offset -> index in out
	var out []Finding
	for _, r := range codePatterns {
		r.each(t, func(start, end int) bool {
			f := Finding{RuleID: r.id, Category: r.category, Severity: r.severity, Description: r.description,
				Field: t.field, Start: start, End: end}
			if i, ok := best[start]; ok {
				if f.Severity.rank() > out[i].Severity.rank() {
					out[i] = f
				}
				return true
			}
			best[start] = len(out)
			out = append(out, f)
			return true
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	line, from := 1, 0
	for i := range out { // in offset order, so the text is counted once
		line += strings.Count(t.scanned[from:out[i].Start], "\n")
		from = out[i].Start
		out[i].Line = line
	}
	return out
}

// sqlTautology accepts a match of sql.tautology whose two operands are the same once
// quotes are dropped, as in ' OR 1=1 or " OR "a"="a: the shape of an injection, unlike
// "'x' or y = z".
func sqlTautology(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return false
	}
	left := strings.Fields(s[:eq])
	if len(left) == 0 {
		return false
	}
	trim := func(v string) string { return strings.Trim(v, `'" `) }
	return strings.EqualFold(trim(left[len(left)-1]), trim(s[eq+1:]))
}
