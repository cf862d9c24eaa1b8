// Command cairn is Cairn's one binary: the federation manager, the local development
// system, the chain service and its tools, key generation, and the federation client
// (register, submit, receipts, verify, audit).
package main

import (
	"errors"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		var printed silentError
		if !errors.As(err, &printed) {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(exitCode(err))
	}
}
