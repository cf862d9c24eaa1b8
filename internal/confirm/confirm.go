// Package confirm asks the person at a terminal to confirm an action that cannot be
// undone, by typing a word the prompt names (as deleting a repository asks for its name).
// Without a terminal it asks nothing and refuses: a script must say --yes, and a pipe on
// standard input is never read as a confirmation.
package confirm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrNoTerminal is returned when there is no terminal to ask on.
var ErrNoTerminal = errors.New("no terminal to confirm on")

// ErrNotConfirmed is returned when the answer is not the word asked for.
var ErrNotConfirmed = errors.New("not confirmed")

// IsTerminal reports whether r is a terminal.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Typed writes what to out, asks for word to be typed, and reads one line from in. It
// returns nil when the line is word (surrounding spaces aside), ErrNotConfirmed for any
// other answer or none, and ErrNoTerminal without reading when terminal is false.
func Typed(in io.Reader, out io.Writer, terminal bool, what, word string) error {
	if !terminal {
		return ErrNoTerminal
	}
	if _, err := fmt.Fprintf(out, "%s\nType %s to confirm: ", what, word); err != nil {
		return err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if strings.TrimSpace(line) != word {
		return ErrNotConfirmed
	}
	return nil
}
