// Command cairn is Cairn's one binary: the federation manager, the local development
// system, the chain service and its tools, key generation, and the federation client
// (register, submit, receipts, verify, audit).
package main

import (
	"errors"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

func main() {
	ctx := cmdutil.WithExit(cmdutil.WithEnv(ctrl.SetupSignalHandler(), os.LookupEnv), os.Exit)
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		var printed cmdutil.SilentError
		if !errors.As(err, &printed) {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(cmdutil.ExitCode(err))
	}
}
