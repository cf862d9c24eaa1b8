package manager

import (
	"testing"
	"time"
)

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
