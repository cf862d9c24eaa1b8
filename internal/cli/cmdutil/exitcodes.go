package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// Exit codes of cairn. Only main calls os.Exit; commands return errors that map to these.
const (
	// ExitOK: the command did what was asked; for a verification, the input matches.
	ExitOK = 0
	// ExitError: the input could not be read or is malformed, or the command failed.
	ExitError = 1
	// ExitUsage: the arguments or flags are wrong.
	ExitUsage = 2
	// ExitMismatch: a verification ran and the input does not match: a hash differs, a
	// signature fails, or nothing binds it to a trusted key.
	ExitMismatch = 3
	// ExitInterrupted: Ctrl-C (SIGINT) stopped the command, as a shell reports it (128+2).
	ExitInterrupted = 130
)

// UsageError marks an error in the command line.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ExitCode maps an error returned by a command to the process's exit code.
func ExitCode(err error) int {
	var usage UsageError
	var entry *protocol.EntryError
	var interrupted InterruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &interrupted):
		return ExitInterrupted
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &entry): // a chain entry that fails verification, however malformed
		return ExitMismatch
	case errors.Is(err, protocol.ErrMalformed):
		return ExitError
	case errors.Is(err, protocol.ErrMismatch), errors.Is(err, protocol.ErrSignature),
		errors.Is(err, protocol.ErrKeyNotTrusted), errors.Is(err, protocol.ErrNoTrustedKey),
		errors.Is(err, protocol.ErrNotIncluded), errors.Is(err, clientconfig.ErrKeyChanged),
		errors.Is(err, witness.ErrNotWitnessed), errors.Is(err, witness.ErrSplitView), errors.Is(err, witness.ErrBadCosignature):
		return ExitMismatch
	}
	return ExitError
}

// ExactArgs requires exactly n positional arguments, described by what.
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return UsageError{Err: fmt.Errorf("want %s, got %d arguments", what, len(args))}
		}
		return nil
	}
}

// NoArgs refuses positional arguments.
var NoArgs = ExactArgs(0, "no arguments")

// InterruptedError is the error of a command stopped by Ctrl-C (exit 130).
type InterruptedError struct{ Err error }

func (e InterruptedError) Error() string { return e.Err.Error() }
func (e InterruptedError) Unwrap() error { return e.Err }
