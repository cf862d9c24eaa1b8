package cmdutil

import "github.com/spf13/cobra"

// Options is a command's options value, the kubectl shape: its flags are bound to it,
// Complete fills in what the flags and arguments leave open, Validate refuses bad
// combinations (as UsageError), and Run does the work.
type Options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(cmd *cobra.Command) error
}

// Run runs o's Complete, Validate and Run in that order, stopping at the first error: a
// command's RunE is `return cmdutil.Run(cmd, args, o)`.
func Run(cmd *cobra.Command, args []string, o Options) error {
	if err := o.Complete(cmd, args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(cmd)
}

// NoCompletion is embedded by options that need no Complete step: their flags are all
// they take.
type NoCompletion struct{}

// Complete does nothing.
func (NoCompletion) Complete(*cobra.Command, []string) error { return nil }

// NoValidation is embedded by options whose every flag value is valid.
type NoValidation struct{}

// Validate accepts anything.
func (NoValidation) Validate() error { return nil }
