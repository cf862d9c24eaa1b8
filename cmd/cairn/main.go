// Command cairn is Cairn's one binary: the federation manager, the local development
// system, and (in later releases) the chain service and the federation client.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}
