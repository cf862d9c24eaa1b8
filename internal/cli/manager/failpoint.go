//go:build failpoints

package manager

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/controllers"
	"github.com/cairn-dev/cairn/internal/federation"
)

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
// steps above (none for ""): they end it with exit (os.Exit, which main wires), or pause
// on pauseFile when it is not "".
func failpointHooks(step, pauseFile string, exitProcess func(code int)) (controllers.Hooks, error) {
	if step != "" && exitProcess == nil {
		return controllers.Hooks{}, fmt.Errorf("%s=%q: no way to end the process was wired", failpointEnv, step)
	}
	exit := func(*fv1.CrossAnchor) {
		if pauseFile != "" {
			pause(step, pauseFile, exitProcess)
			return
		}
		fmt.Fprintf(os.Stderr, "failpoint %s: exiting as a crash would\n", step)
		exitProcess(failpointExitCode)
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
			if marked.Add(1) >= int64(max(federation.ParticipantCount(ca)/2, 1)) {
				exit(ca)
			}
		}}, nil
	}
	return controllers.Hooks{}, fmt.Errorf("%s=%q: want %s, %s or %s", failpointEnv, step, failAfterAnchorCreated, failAfterHalfMarked, failAfterLogUpload)
}

// pause creates file and waits until it is removed; the hooks run once per step, so a
// manager pauses at most once per anchor.
func pause(step, file string, exitProcess func(code int)) {
	fmt.Fprintf(os.Stderr, "failpoint %s: paused until %s is removed\n", step, file)
	if err := os.WriteFile(file, []byte(step+"\n"), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "failpoint %s: %v\n", step, err)
		exitProcess(failpointExitCode)
	}
	for {
		if _, err := os.Stat(file); os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "failpoint %s: resumed\n", step)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
