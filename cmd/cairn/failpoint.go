package main

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/controllers"
)

// failpointEnv names the environment variable that makes `cairn manager` exit at one
// step of an anchor, as a crash there would: the end-to-end fault tests set it, so the
// steps after it are left to the next manager.
const failpointEnv = "CAIRN_FAILPOINT"

// The steps failpointEnv can name.
const (
	// failAfterAnchorCreated exits once the CrossAnchor exists, before the Federation's
	// status names it.
	failAfterAnchorCreated = "anchor-created"
	// failAfterHalfMarked exits once the Submission controller has marked half as many
	// submissions anchored as the anchor has participants.
	failAfterHalfMarked = "half-marked"
	// failAfterLogUpload exits once the log took the record, before status says so.
	failAfterLogUpload = "log-uploaded"
)

// failpointExitCode is the exit status of a manager stopped by a failpoint.
const failpointExitCode = 86

// failpointPauseEnv names the environment variable that makes a failpoint pause instead
// of exit: at the step it creates the file the variable names and waits until that file
// is removed, so that a test can inject its fault (restart the API server, SIGKILL the
// process) at exactly that step.
const failpointPauseEnv = "CAIRN_FAILPOINT_PAUSE"

// failpointHooks returns the controller hooks that stop the process at step, one of the
// steps above (none for ""): they exit, or pause on pauseFile when it is not "".
func failpointHooks(step, pauseFile string) (controllers.Hooks, error) {
	exit := func(*fv1.CrossAnchor) {
		if pauseFile != "" {
			pause(step, pauseFile)
			return
		}
		fmt.Fprintf(os.Stderr, "failpoint %s: exiting as a crash would\n", step)
		os.Exit(failpointExitCode)
	}
	switch step {
	case "":
		return controllers.Hooks{}, nil
	case failAfterAnchorCreated:
		return controllers.Hooks{AnchorCreated: exit}, nil
	case failAfterLogUpload:
		return controllers.Hooks{LogUploaded: exit}, nil
	case failAfterHalfMarked:
		var marked atomic.Int64
		return controllers.Hooks{SubmissionMarked: func(ca *fv1.CrossAnchor) {
			if marked.Add(1) >= int64(max(len(ca.Spec.Participants)/2, 1)) {
				exit(ca)
			}
		}}, nil
	}
	return controllers.Hooks{}, fmt.Errorf("%s=%q: want %s, %s or %s", failpointEnv, step, failAfterAnchorCreated, failAfterHalfMarked, failAfterLogUpload)
}

// pause creates file and waits until it is removed; the hooks run once per step, so a
// manager pauses at most once per anchor.
func pause(step, file string) {
	fmt.Fprintf(os.Stderr, "failpoint %s: paused until %s is removed\n", step, file)
	if err := os.WriteFile(file, []byte(step+"\n"), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "failpoint %s: %v\n", step, err)
		os.Exit(failpointExitCode)
	}
	for {
		if _, err := os.Stat(file); os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "failpoint %s: resumed\n", step)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

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
