package manager

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli/cmdtest"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

func runCairn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return cmdtest.Run(t, cmdutil.NewRoot("cairn", "", NewCommand()), args...)
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

// TestManagerRefusesUnknownFailpoint checks that the failpoint variable reaches the
// manager through the environment the binary passes down, and is refused by a binary
// without failpoints rather than ignored.
func TestManagerRefusesUnknownFailpoint(t *testing.T) {
	t.Setenv(failpointEnv, "made-up")
	_, err := runCairn(t, "manager")
	if err == nil || !strings.Contains(err.Error(), failpointEnv) {
		t.Fatalf("cairn manager with %s=made-up: %v", failpointEnv, err)
	}
}
