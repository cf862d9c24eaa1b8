package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/protocol"
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

// usageError marks an error in the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode maps an error returned by a command to the process's exit code.
func exitCode(err error) int {
	var usage usageError
	var entry *protocol.EntryError
	var interrupted interruptedError
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
		errors.Is(err, protocol.ErrNotIncluded), errors.Is(err, clientconfig.ErrKeyChanged):
		return ExitMismatch
	}
	return ExitError
}

// exactArgs requires exactly n positional arguments, described by what.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("want %s, got %d arguments", what, len(args))}
		}
		return nil
	}
}

// noArgs refuses positional arguments.
var noArgs = exactArgs(0, "no arguments")
