package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/version"
)

// versionOptions are `cairn version`'s: kubectl's version command, whose text and JSON
// forms render the same information.
type versionOptions struct {
	cmdutil.NoCompletion
	output string
}

func newVersionCommand() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of cairn",
		Example: `  # The version, the Go release it was built with and the platform
  cairn version

  # The same as JSON
  cairn version -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: empty for text, or json")
	return cmd
}

// Validate accepts the output formats Run knows.
func (o *versionOptions) Validate() error {
	if o.output != "" && o.output != "json" {
		return cmdutil.UsageError{Err: fmt.Errorf("--output must be empty or json, not %q", o.output)}
	}
	return nil
}

// Run prints the version as text or JSON.
func (o *versionOptions) Run(cmd *cobra.Command) error {
	if o.output == "json" {
		return cmdutil.WriteJSON(cmd.OutOrStdout(), version.Get())
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
	return err
}

// versionLine is what `cairn version` and `cairn --version` print.
func versionLine() string {
	info := version.Get()
	return fmt.Sprintf("cairn %s (%s, %s)", info.Version, info.GoVersion, info.Platform)
}
