// Package version reports the build of the cairn binary.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release, set at link time with
// -ldflags "-X github.com/cairn-dev/cairn/internal/version.Version=v0.1.0".
// When unset, the module version recorded by the Go toolchain is used.
var Version = ""

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the running binary's build information.
func Get() Info {
	v := Version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	return Info{Version: v, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}
