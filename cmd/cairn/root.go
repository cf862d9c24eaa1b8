package main

import (
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/analysis"
	"github.com/cairn-dev/cairn/internal/cli/chain"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/dev"
	"github.com/cairn-dev/cairn/internal/cli/federation"
	"github.com/cairn-dev/cairn/internal/cli/keygen"
	"github.com/cairn-dev/cairn/internal/cli/manager"
	"github.com/cairn-dev/cairn/internal/cli/serve"
	"github.com/cairn-dev/cairn/internal/cli/witness"
)

// newRootCommand builds the cairn command tree, one group of commands per audience.
func newRootCommand() *cobra.Command {
	root := cmdutil.NewRoot("cairn", "Tamper-evident audit chains for LLM calls, cross-anchored by a federation",
		newVersionCommand(), manager.NewCommand(), dev.NewDevCommand(), keygen.NewCommand(), federation.NewCommand(),
		chain.NewCommand(), analysis.NewExportCommand(), analysis.NewVerifyExportCommand(), analysis.NewRegressionCommand(), analysis.NewEnergyCommand(),
		serve.NewCommand(), analysis.NewReplayCommand(), dev.NewDemoCommand(), witness.NewCommand())
	root.Version = versionLine() // --version prints what `cairn version` does
	root.SetVersionTemplate("{{.Version}}\n")
	return root
}
