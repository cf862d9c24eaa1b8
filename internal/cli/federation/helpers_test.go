package federation

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/analysis"
	"github.com/cairn-dev/cairn/internal/cli/chain"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/keygen"
)

const testSecretHex = cmdtest.SecretHex

// newRootCommand is a cairn tree holding federation and the commands its tests use
// beside it.
func newRootCommand() *cobra.Command {
	return cmdutil.NewRoot("cairn", "", NewCommand(), chain.NewCommand(), keygen.NewCommand(),
		analysis.NewExportCommand(), analysis.NewVerifyExportCommand(), analysis.NewRegressionCommand(), analysis.NewEnergyCommand(),
		analysis.NewReplayCommand())
}

// runCairn runs `cairn args...` over newRootCommand's tree.
func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, newRootCommand(), args...)
}
