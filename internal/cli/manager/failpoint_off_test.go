//go:build !failpoints

package manager

import (
	"os"
	"strings"
	"testing"
)

// TestNoFailpointsShipped checks that a binary built without the failpoints tag refuses
// every failpoint rather than ignoring it, and runs without one.
func TestNoFailpointsShipped(t *testing.T) {
	if _, err := failpointHooks("", "", os.Exit); err != nil {
		t.Fatalf("no failpoint: %v", err)
	}
	for _, step := range []string{"anchor-created", "log-uploaded", "made-up"} {
		if _, err := failpointHooks(step, "", os.Exit); err == nil || !strings.Contains(err.Error(), "-tags failpoints") {
			t.Errorf("%q: %v, want a refusal naming the build tag", step, err)
		}
	}
}
