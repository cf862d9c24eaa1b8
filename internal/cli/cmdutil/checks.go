package cmdutil

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// WriteChecks writes one line a check: ok, skip or FAIL, its name and its detail.
func WriteChecks(b *strings.Builder, checks []protocol.Check) {
	for _, c := range checks {
		fmt.Fprintf(b, "%s  %-22s %s\n", checkMark(c), c.Name, c.Detail)
	}
}

// checkMark is "ok  ", "skip" or "FAIL".
func checkMark(c protocol.Check) string {
	switch {
	case c.Skipped:
		return "skip"
	case !c.OK:
		return "FAIL"
	}
	return "ok  "
}
