//go:build failpoints

package manager

import (
	"os"
	"testing"
)

// TestFailpointHooks checks that each step names exactly one hook and that an unknown step
// is refused rather than ignored (a fault test that set a misspelt step would otherwise
// pass without a crash).
func TestFailpointHooks(t *testing.T) {
	for step, want := range map[string]string{
		"":                     "",
		failAfterAnchorCreated: "AnchorCreated",
		failAfterHalfMarked:    "SubmissionMarked",
		failAfterLogUpload:     "LogUploaded",
	} {
		h, err := failpointHooks(step, "", os.Exit)
		if err != nil {
			t.Fatalf("%q: %v", step, err)
		}
		set := map[string]bool{"AnchorCreated": h.AnchorCreated != nil, "SubmissionMarked": h.SubmissionMarked != nil, "LogUploaded": h.LogUploaded != nil}
		for name, isSet := range set {
			if isSet != (name == want) {
				t.Errorf("%q: hook %s set %v", step, name, isSet)
			}
		}
	}
	if _, err := failpointHooks("anchor-made", "", os.Exit); err == nil {
		t.Error("an unknown step was taken")
	}
}
