package serve

import (
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/chain"
	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/keygen"
)

const testSecretHex = cmdtest.SecretHex

// newRootCommand is a cairn tree holding serve and the commands its tests use beside it.
func newRootCommand() *cobra.Command {
	return cmdutil.NewRoot("cairn", "", NewCommand(), chain.NewCommand(), keygen.NewCommand())
}

// runCairn runs `cairn args...` over newRootCommand's tree.
func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, newRootCommand(), args...)
}

// startServe runs `cairn serve --addr <a free loopback port> args...` until ctx ends, and
// returns its base URL once /health answers and a channel that gets serve's result.
func startServe(t *testing.T, ctx context.Context, args ...string) (base string, done <-chan error) {
	t.Helper()
	return cmdtest.StartServe(t, ctx, newRootCommand(), args...)
}
