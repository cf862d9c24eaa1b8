package manager

import (
	"fmt"
	"strings"
	"time"
)

// The end-to-end tests' hooks into `cairn manager`: failpoints, compiled only into a
// binary built with -tags failpoints (failpoint.go; the shipped binary refuses them,
// failpoint_off.go), and the log leg's retry schedule.

// failpointEnv names the environment variable that makes `cairn manager` exit at one
// step of an anchor, as a crash there would: the end-to-end fault tests set it, so the
// steps after it are left to the next manager.
const failpointEnv = "CAIRN_FAILPOINT"

// failpointPauseEnv names the environment variable that makes a failpoint pause instead
// of exit: at the step it creates the file the variable names and waits until that file
// is removed, so that a test can inject its fault (restart the API server, SIGKILL the
// process) at exactly that step.
const failpointPauseEnv = "CAIRN_FAILPOINT_PAUSE"

// retryScheduleEnv names the environment variable that replaces the log leg's retry
// schedule (1m, 5m, 15m, 1h) of `cairn manager` with a comma-separated list of
// durations, so that the fault tests see a log come back within seconds.
const retryScheduleEnv = "CAIRN_RETRY_SCHEDULE"

// retrySchedule parses retryScheduleEnv's value; nil (the default schedule) for "".
func retrySchedule(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	var schedule []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want positive durations separated by commas, e.g. 2s,2s", retryScheduleEnv, s)
		}
		schedule = append(schedule, d)
	}
	return schedule, nil
}
