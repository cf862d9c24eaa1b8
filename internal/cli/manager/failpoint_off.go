//go:build !failpoints

package manager

import (
	"fmt"

	"github.com/cairn-dev/cairn/controllers"
)

// failpointHooks, in a binary built without the failpoints tag (every shipped one),
// refuses any step: such a manager has no way to stop itself half-way.
func failpointHooks(step, _ string, _ func(int)) (controllers.Hooks, error) {
	if step != "" {
		return controllers.Hooks{}, fmt.Errorf("%s=%q: this binary has no failpoints; the end-to-end tests build one with -tags failpoints", failpointEnv, step)
	}
	return controllers.Hooks{}, nil
}
