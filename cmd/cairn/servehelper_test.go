package main

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
)

// startServe runs `cairn serve --addr <a free loopback port> args...` until ctx ends, and
// returns its base URL once /health answers and a channel that gets serve's result.
func startServe(t *testing.T, ctx context.Context, args ...string) (base string, done <-chan error) {
	t.Helper()
	return cmdtest.StartServe(t, ctx, newRootCommand(), args...)
}
