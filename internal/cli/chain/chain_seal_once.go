package chain

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file reports what `cairn chain seal` did: spans sealed, spans skipped because the
// chain held them (store.SealOnce), spans refused because it held their ids with other
// content, and, after Ctrl-C, which lines are sealed.

// errSealInterrupted is wrapped by sealInput's error when its context was cancelled.
var errSealInterrupted = errors.New("interrupted")

// maxShownConflicts is how many refused lines `cairn chain seal` describes one by one.
const maxShownConflicts = 10

// sealTally is what sealInput did so far.
type sealTally struct {
	sealed     int             // spans sealed
	duplicates int             // spans skipped: the chain held them
	refused    int             // spans refused: the chain held their ids with other content
	conflicts  []string        // the first maxShownConflicts refused, described with their line
	first      *protocol.Entry // the first entry sealed, nil when none was
	head       *protocol.Entry // the last entry sealed, nil when none was
	lines      int             // every line of the input up to this one is sealed, skipped or refused
	bytes      int64           // the input's bytes up to the end of line lines
}

// add counts a batch's report; lineNo[i] is the input line of the batch's body i.
func (t *sealTally) add(r *store.SealReport, lineNo []int) {
	if n := len(r.Entries); n > 0 {
		if t.first == nil {
			t.first = r.Entries[0]
		}
		t.sealed, t.head = t.sealed+n, r.Entries[n-1]
	}
	t.duplicates += r.Duplicates
	t.refused += len(r.Conflicts)
	for _, c := range r.Conflicts {
		if len(t.conflicts) < maxShownConflicts {
			t.conflicts = append(t.conflicts, fmt.Sprintf("line %d: %v", lineNo[c.Index], c))
		}
	}
}

// spans is how many spans the input held, sealed or not.
func (t *sealTally) spans() int { return t.sealed + t.duplicates + t.refused }

// runChainSeal seals in, named name (size bytes, 0 when unknown), into s and reports on
// cmd's output: the result, then the refused lines on standard error, or after Ctrl-C
// which lines are sealed.
func runChainSeal(cmd *cobra.Command, s *store.Store, in io.Reader, name string, size int64) error {
	bar := newSealProgress(cmd.ErrOrStderr(), name, size)
	t, err := sealInput(cmd.Context(), s, in, bar.update)
	bar.done(t)
	stderr := cmd.ErrOrStderr()
	for _, c := range t.conflicts {
		_, _ = fmt.Fprintln(stderr, c)
	}
	if more := t.refused - len(t.conflicts); more > 0 {
		_, _ = fmt.Fprintf(stderr, "and %d more lines refused\n", more)
	}
	if errors.Is(err, errSealInterrupted) {
		_, _ = fmt.Fprintln(stderr, interruptedMessage(t, name))
		return cmdutil.SilentError{Err: cmdutil.InterruptedError{Err: err}}
	}
	if err != nil {
		return err
	}
	head := t.head
	if head == nil { // every span was in the chain already
		last, err := s.LastSeq(cmd.Context())
		if err != nil {
			return err
		}
		if head, err = s.Entry(cmd.Context(), last); err != nil {
			return err
		}
	}
	skipped := ""
	if t.duplicates > 0 {
		skipped = fmt.Sprintf(" (%d already sealed, skipped)", t.duplicates)
	}
	if _, err := fmt.Fprintf(cmd.OutOrStdout(), "sealed %d spans%s; chain head seq %d %s\n",
		t.sealed, skipped, head.Seq, head.HMACHash); err != nil {
		return err
	}
	if t.refused > 0 {
		return fmt.Errorf("%d spans refused: the chain holds their trace_id and span_id with other content (lines above); the rest are sealed", t.refused)
	}
	return nil
}

// interruptedMessage says which lines of the input named name are sealed after Ctrl-C.
func interruptedMessage(t *sealTally, name string) string {
	if t.lines == 0 {
		return "interrupted: no line of " + name + " was sealed; run the same command again to seal them"
	}
	run := "none of them by this run: they were sealed before"
	if t.first != nil {
		run = fmt.Sprintf("seq %s–%s by this run", groupDigits(t.first.Seq), groupDigits(t.head.Seq))
	}
	refused := ""
	if t.refused > 0 {
		refused = fmt.Sprintf(", but for %s refused (above)", groupDigits(int64(t.refused)))
	}
	return fmt.Sprintf("interrupted: lines 1–%s of %s sealed%s (%s); run the same command again to continue — sealed spans are skipped",
		groupDigits(int64(t.lines)), name, refused, run)
}

// inputName names the --file value in messages.
func inputName(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}

// inputSize is the size of in when it is a regular file, else 0.
func inputSize(in io.Reader) int64 {
	f, ok := in.(*os.File)
	if !ok {
		return 0
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return 0
	}
	return info.Size()
}
