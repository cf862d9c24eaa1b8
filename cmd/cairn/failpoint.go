package main

import (
	"fmt"
	"os"
	"sync/atomic"

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

// failpointHooks returns the controller hooks that stop the process at step, one of the
// steps above; none for "".
func failpointHooks(step string) (controllers.Hooks, error) {
	exit := func(*fv1.CrossAnchor) {
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
