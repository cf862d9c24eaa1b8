package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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

// TestOnlyClusterCommandsTakeClusterFlags: --zap-* and --kubeconfig belong to manager and
// dev; every other command's help shows only its own flags.
func TestOnlyClusterCommandsTakeClusterFlags(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			out, err := runCairn(t, append(strings.Fields(sub.CommandPath())[1:], "--help")...)
			if err != nil {
				t.Fatalf("%s --help: %v", sub.CommandPath(), err)
			}
			cluster := sub.Name() == "manager" || sub.Name() == "dev"
			for _, flag := range []string{"--zap-log-level", "--kubeconfig"} {
				if got := strings.Contains(out, flag); got != cluster {
					t.Errorf("%s --help shows %s: %t, want %t", sub.CommandPath(), flag, got, cluster)
				}
			}
			walk(sub)
		}
	}
	walk(newRootCommand())
}

// TestEveryCommandHasAnExample: every command that runs shows real invocations under
// "Examples:" in its help, as kubectl's and cosign's do (issue 34).
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Runnable() && !sub.HasSubCommands() && !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" &&
				!strings.Contains(sub.Example, "cairn ") {
				t.Errorf("%s has no Example", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(newRootCommand())
}
