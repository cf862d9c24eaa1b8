package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/confirm"
)

// ConfirmIrreversible asks on the terminal, before an action that cannot be undone, for
// word to be typed (the command's --yes skips the call). Without a terminal it refuses as
// a usage error naming --yes, and reads nothing.
func ConfirmIrreversible(cmd *cobra.Command, what, word string) error {
	in := cmd.InOrStdin()
	err := confirm.Typed(in, cmd.ErrOrStderr(), confirm.IsTerminal(in), what, word)
	switch {
	case errors.Is(err, confirm.ErrNoTerminal):
		return UsageError{Err: fmt.Errorf("%s cannot be undone and there is no terminal to confirm on: pass --yes", cmd.CommandPath())}
	case errors.Is(err, confirm.ErrNotConfirmed):
		return fmt.Errorf("%s: not confirmed, nothing was sent", cmd.CommandPath())
	}
	return err
}
