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

func TestManagerRejectsBadOptions(t *testing.T) {
	_, err := runCairn(t, "manager", "--health-probe-bind-address", "nowhere")
	if err == nil || !strings.Contains(err.Error(), `--health-probe-bind-address "nowhere"`) {
		t.Fatalf("cairn manager with a bad probe address: %v", err)
	}
}

func TestManagerNamespacesMustHoldTheFederation(t *testing.T) {
	t.Setenv("CAIRN_NAMESPACES", "tenant-a,tenant-b")
	_, err := runCairn(t, "manager", "--federation", "cairn-system/cairn")
	if err == nil || !strings.Contains(err.Error(), "namespace cairn-system is not among --namespaces tenant-a,tenant-b") {
		t.Fatalf("cairn manager with CAIRN_NAMESPACES lacking the Federation's namespace: %v", err)
	}
}

func TestHelpListsEnvironment(t *testing.T) {
	out, err := runCairn(t, "manager", "--help")
	if err != nil || !strings.Contains(out, "CAIRN_LEADER_ELECT") {
		t.Fatalf("cairn manager --help: %v\n%s", err, out)
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
