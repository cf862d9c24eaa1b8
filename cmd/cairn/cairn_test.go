package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/clitest"
)

func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(t, newRootCommand(), args...)
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

func TestDialAddress(t *testing.T) {
	tests := map[string]string{
		":8081":          "127.0.0.1:8081",
		"0.0.0.0:8081":   "127.0.0.1:8081",
		"[::]:8081":      "127.0.0.1:8081",
		"127.0.0.1:9000": "127.0.0.1:9000",
		"localhost:9000": "localhost:9000",
	}
	for bind, want := range tests {
		if got := dialAddress(bind); got != want {
			t.Errorf("dialAddress(%q) = %q, want %q", bind, got, want)
		}
	}
}
