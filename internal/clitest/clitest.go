// Package clitest runs the real cairn binary in tests: it builds cmd/cairn once per test
// process and runs it as a user would, with its own stdin, stdout, stderr and exit code.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Result is what one run of the binary did.
type Result struct {
	Stdout, Stderr string
	// Code is the exit code; -1 when the process was killed.
	Code int
	// Took is how long it ran.
	Took time.Duration
}

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Binary returns the path of a cairn binary built from this tree, building it on the
// first call of the test process. The binary is removed by Cleanup (call it from TestMain)
// or left in the temporary directory.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "cairn-clitest-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "cairn")
		out, err := exec.Command("go", "build", "-o", build.path, "github.com/cairn-dev/cairn/cmd/cairn").CombinedOutput()
		if err != nil {
			build.err = errors.New("go build cmd/cairn: " + err.Error() + "\n" + string(out))
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// Cleanup removes the binary Binary built, if any.
func Cleanup() {
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
}

// Run runs the binary with args and stdin (nil for none, which is not a terminal), in the
// environment of the test plus env ("NAME=value"), and waits up to a minute.
func Run(t testing.TB, stdin []byte, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	default:
		t.Fatalf("run cairn %v: %v", args, err)
	}
	return r
}
