package dev

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// runCairn runs `cairn args...` over a tree holding dev and demo.
func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, cmdutil.NewRoot("cairn", "", NewDevCommand(), NewDemoCommand()), args...)
}
