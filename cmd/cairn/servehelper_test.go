package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/clitest"
)

// startServe runs `cairn serve --addr <a free loopback port> args...` until ctx ends, and
// returns its base URL once /health answers and a channel that gets serve's result.
func startServe(t *testing.T, ctx context.Context, args ...string) (base string, done <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	result := make(chan error, 1)
	go func() {
		cmd := newRootCommand()
		cmd.SetArgs(append([]string{"serve", "--addr", addr}, args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		result <- cmd.ExecuteContext(clitest.Context(ctx))
	}()
	waitCtx, stopWaiting := context.WithTimeout(ctx, 20*time.Second)
	defer stopWaiting()
	base = "http://" + addr
	if err := waitReady(waitCtx, base+"/health", result); err != nil {
		t.Fatalf("cairn serve did not start: %v", err)
	}
	return base, result
}
