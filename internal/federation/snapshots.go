package federation

import (
	"fmt"
	"regexp"
	"time"
)

// DefaultSnapshotInterval is how often the snapshotter looks whether this week's snapshot
// is taken.
const DefaultSnapshotInterval = time.Hour

// weekKey matches a snapshot's key: an ISO year and week, such as 2026-W48.
var weekKey = regexp.MustCompile(`^[0-9]{4}-W[0-9]{2}$`)

// LogSnapshotsName is the name of fed's snapshot ConfigMap, in fed's namespace.
func LogSnapshotsName(fed string) string { return fed + "-log-snapshots" }

// SnapshotWeek is the key of t's week: its ISO year and week, such as 2026-W48.
func SnapshotWeek(t time.Time) string {
	year, week := t.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", year, week)
}

// IsSnapshotWeek reports whether key has the form of a snapshot's key.
func IsSnapshotWeek(key string) bool { return weekKey.MatchString(key) }
