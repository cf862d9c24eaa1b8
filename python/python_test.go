package python_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// python3 returns the path of python3 on PATH. Without one the test is skipped, unless
// CAIRN_REQUIRE_PYTHON=1 (make test sets it) makes that a failure.
func python3(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err == nil {
		return path
	}
	if os.Getenv("CAIRN_REQUIRE_PYTHON") == "1" {
		t.Fatalf("no python3 on PATH and CAIRN_REQUIRE_PYTHON=1: install Python 3.9 or later (%v)", err)
	}
	t.Skipf("no python3 on PATH: the Python replay helpers are not tested (set CAIRN_REQUIRE_PYTHON=1 to make this a failure): %v", err)
	return ""
}

// runPython runs python3 with args in this directory, stdin as its input, and returns
// its standard output; it fails the test when python3 fails.
func runPython(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python3(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// No bytecode files in the repository, and no user site packages: the helpers use
	// the standard library only.
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1", "PYTHONIOENCODING=utf-8")
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestPythonUnitTests runs the Python helpers' own unit tests (unittest).
func TestPythonUnitTests(t *testing.T) {
	out := runPython(t, nil, "-m", "unittest", "-v", "test_cairn_replay")
	t.Logf("%s", out)
}
