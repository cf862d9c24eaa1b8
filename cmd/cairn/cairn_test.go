package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
)

func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, newRootCommand(), args...)
}

func TestVersion(t *testing.T) {
	out, err := runCairn(t, "version")
	if err != nil || !strings.HasPrefix(out, "cairn ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("cairn version: %q, %v", out, err)
	}

	out, err = runCairn(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Version, GoVersion, Platform string }
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.GoVersion != runtime.Version() || info.Version == "" {
		t.Fatalf("cairn version -o json: %q (%v)", out, err)
	}

	if _, err := runCairn(t, "version", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), `not "yaml"`) {
		t.Fatalf("cairn version -o yaml: %v", err)
	}
}

const testSecretHex = cmdtest.SecretHex
