package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of cairn",
		Example: `  # The version, the Go release it was built with and the platform
  cairn version

  # The same as JSON
  cairn version -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch output {
			case "":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return cmdutil.UsageError{Err: fmt.Errorf("--output must be empty or json, not %q", output)}
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: empty for text, or json")
	return cmd
}

// versionLine is what `cairn version` and `cairn --version` print.
func versionLine() string {
	info := version.Get()
	return fmt.Sprintf("cairn %s (%s, %s)", info.Version, info.GoVersion, info.Platform)
}
