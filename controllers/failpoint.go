package controllers

import (
	"fmt"
	"os"
)

// FailpointEnv names the environment variable that makes the manager exit at one step of
// an anchor (its run, its marking, its log leg), as a crash there would: the end-to-end
// fault tests set it, so the steps after it are left to the next manager.
const FailpointEnv = "CAIRN_FAILPOINT"

// The steps FailpointEnv can name.
const (
	// FailAfterAnchorCreated exits once the CrossAnchor exists, before any marking.
	FailAfterAnchorCreated = "anchor-created"
	// FailAfterHalfMarked exits once the Submission controller has marked half as many
	// submissions anchored as the anchor has participants.
	FailAfterHalfMarked = "half-marked"
	// FailAfterLogUpload exits once the log took the record, before status says so.
	FailAfterLogUpload = "log-uploaded"
)

// FailpointExitCode is the exit status of a manager stopped by a failpoint.
const FailpointExitCode = 86

// failpoint exits the process when FailpointEnv names step.
func failpoint(step string) {
	if os.Getenv(FailpointEnv) == step {
		fmt.Fprintf(os.Stderr, "failpoint %s: exiting as a crash would\n", step)
		os.Exit(FailpointExitCode)
	}
}
