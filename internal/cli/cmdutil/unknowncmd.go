package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// rejectUnknownSubcommands makes every command group under root (a command with
// subcommands and nothing of its own to run) refuse an argument that names none of its
// subcommands, as kubectl does: "unknown command", the nearest names, exit 2. Without
// it cobra printed the group's help and exited 0 for `cairn federation sumbit`. A group
// given no argument still prints its help.
func rejectUnknownSubcommands(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.HasSubCommands() && !cmd.Runnable() { // its Args, if any, were never checked
			cmd.Args = unknownSubcommand
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand refuses any argument of a command group: cobra hands a group the
// arguments that named none of its subcommands.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only for the root
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", args[0], cmd.CommandPath())
	if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
		b.WriteString("\n\nDid you mean this?\n")
		for _, s := range suggestions {
			fmt.Fprintf(&b, "\t%s\n", s)
		}
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Run '%s --help' for its commands.", cmd.CommandPath())
	return UsageError{Err: fmt.Errorf("%s", b.String())}
}
