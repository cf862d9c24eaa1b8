// Package cmdtest runs cairn commands in tests the way the binary runs them: under the
// process's environment (which the binary's main passes down), with the command's
// output captured.
package cmdtest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// Context is ctx carrying the test process's environment, as main's context does.
func Context(ctx context.Context) context.Context {
	return cmdutil.WithEnv(ctx, os.LookupEnv)
}

// Run executes root with args and returns what it printed, stdout and stderr together.
func Run(t testing.TB, root *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(Context(context.Background()))
	return out.String(), err
}
