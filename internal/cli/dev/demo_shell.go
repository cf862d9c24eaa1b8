package dev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// demoShell runs cairn commands as a reader of the demo would type them: the cairn binary
// itself, in a directory of the story, with the story's environment, printing each as
// "<directory>$ cairn <args>" so that it can be copied.
type demoShell struct {
	// bin is the cairn binary (os.Executable).
	bin string
	// env is the environment of every command: this process's without any CAIRN_*
	// variable, which would change what the printed command does, plus the story's own.
	env []string
	out io.Writer
}

// newDemoShell returns a shell running bin with the story's variables vars ("NAME=value").
func newDemoShell(bin string, out io.Writer, vars ...string) *demoShell {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			env = append(env, kv)
		}
	}
	return &demoShell{bin: bin, env: append(env, vars...), out: out}
}

// demoResult is what a command did.
type demoResult struct {
	code           int
	stdout, stderr string
	// dir is where it ran, which the printed output leaves out of paths.
	dir string
}

// lastLine is the last non-empty line of the command's standard output.
func (r demoResult) lastLine() string {
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	return r.relative(lines[len(lines)-1])
}

// errorLine is the line of standard error that says why the command failed.
func (r demoResult) errorLine() string {
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "refused: ") {
			return r.relative(l)
		}
	}
	return r.relative(lines[len(lines)-1])
}

// relative makes paths under the command's directory relative to it, as the printed
// command names them.
func (r demoResult) relative(s string) string {
	return strings.ReplaceAll(s, r.dir+string(filepath.Separator), "")
}

// failure describes a command that did not exit as it should have.
func (r demoResult) failure(args []string, want string) error {
	out := strings.TrimSpace(r.stdout + "\n" + r.stderr)
	return fmt.Errorf("cairn %s exited %d, want %s:\n%s", strings.Join(args, " "), r.code, want, indent(out, "      "))
}

// run prints the command as it would be typed in dir (named prompt), runs it, and
// returns what it did. Only a command that could not be started is an error.
func (s *demoShell) run(ctx context.Context, dir, prompt string, args ...string) (demoResult, error) {
	s.printf("%s\n", commandLine(prompt, args))
	return s.quiet(ctx, dir, args...)
}

// quiet runs the command without printing it (a repetition of one printed before).
func (s *demoShell) quiet(ctx context.Context, dir string, args ...string) (demoResult, error) {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Dir, cmd.Env = dir, s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := demoResult{stdout: stdout.String(), stderr: stderr.String(), dir: dir}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		return res, fmt.Errorf("run cairn %s: %w", strings.Join(args, " "), err)
	}
	return res, nil
}

// must runs the command, printed, and requires exit status 0.
func (s *demoShell) must(ctx context.Context, dir, prompt string, args ...string) (demoResult, error) {
	res, err := s.run(ctx, dir, prompt, args...)
	if err == nil && res.code != 0 {
		err = res.failure(args, "0")
	}
	return res, err
}

// output prints a line a command printed, indented under the command.
func (s *demoShell) output(line string) {
	s.printf("     %s\n", line)
}

// note prints a line of the story about who (an organization, "auditor"), filled to
// commandWidth; with who "" it is not indented under a name.
func (s *demoShell) note(who, format string, args ...any) {
	first := "   "
	if who != "" {
		first = fmt.Sprintf("   %-16s ", who)
	}
	s.printf("%s\n", wrap(first, fmt.Sprintf(format, args...)))
}

// printf prints to the story. Nothing is to be done about a terminal that went away.
func (s *demoShell) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(s.out, format, args...)
}

// commandWidth is how wide a printed command may grow before it is continued on the next
// line.
const commandWidth = 100

// commandLine is the command as typed at prompt: "   <prompt>$ cairn <args>", continued
// with a backslash before an option (and its value) that would pass commandWidth.
func commandLine(prompt string, args []string) string {
	const cont = "       "
	var b strings.Builder
	b.WriteString("   " + prompt + "$ cairn")
	width := b.Len()
	for i := 0; i < len(args); i++ {
		unit := shellQuote(args[i : i+1])
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			unit += " " + shellQuote(args[i:i+1])
		}
		if strings.HasPrefix(unit, "--") && width+1+len(unit) > commandWidth {
			b.WriteString(" \\\n" + cont + unit)
			width = len(cont) + len(unit)
			continue
		}
		b.WriteString(" " + unit)
		width += 1 + len(unit)
	}
	return b.String()
}

// shellQuote joins args as a POSIX shell would read them back.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_./=:@,+", r)
		}) < 0 {
			quoted[i] = a
			continue
		}
		if !strings.ContainsAny(a, "\"$`\\!") {
			quoted[i] = `"` + a + `"`
			continue
		}
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// wrap fills text into lines of at most commandWidth, the first starting with first and
// the others with as many spaces.
func wrap(first, text string) string {
	var b strings.Builder
	b.WriteString(first)
	width := utf8.RuneCountInString(first)
	rest := strings.Repeat(" ", width)
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case width+1+n > commandWidth:
			b.WriteString("\n" + rest)
			width = len(rest)
		default:
			b.WriteString(" ")
			width++
		}
		b.WriteString(word)
		width += n
	}
	return b.String()
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
