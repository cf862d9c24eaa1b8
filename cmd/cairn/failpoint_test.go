package main

import (
	"testing"
	"time"
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
		h, err := failpointHooks(step, "")
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
	if _, err := failpointHooks("anchor-made", ""); err == nil {
		t.Error("an unknown step was taken")
	}
}

// TestRetrySchedule checks that the fault tests' retry schedule is parsed, and that a
// value that is not a list of positive durations is refused rather than ignored.
func TestRetrySchedule(t *testing.T) {
	if got, err := retrySchedule(""); got != nil || err != nil {
		t.Errorf(`"": %v %v, want the default (nil)`, got, err)
	}
	if got, err := retrySchedule("2s, 500ms"); err != nil || len(got) != 2 || got[0] != 2*time.Second || got[1] != 500*time.Millisecond {
		t.Errorf(`"2s, 500ms": %v %v`, got, err)
	}
	for _, bad := range []string{"2", "2s,", "-1s", "0s"} {
		if _, err := retrySchedule(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}
