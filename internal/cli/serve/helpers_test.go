package serve

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

const testSecretHex = cmdtest.SecretHex

// runCairn runs `cairn args...` over a tree holding serve.
func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, cmdutil.NewRoot("cairn", "", NewCommand()), args...)
}

// startServe runs `cairn serve --addr <a free loopback port> args...` until ctx ends, and
// returns its base URL once /health answers and a channel that gets serve's result.
func startServe(t *testing.T, ctx context.Context, args ...string) (base string, done <-chan error) {
	t.Helper()
	return cmdtest.StartServe(t, ctx, cmdutil.NewRoot("cairn", "", NewCommand()), args...)
}
