package tlog

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// tesseraStateDir is where tessera's POSIX storage keeps its tree state and lock files.
const tesseraStateDir = ".state"

// writable returns an error when the log's state directory is missing or cannot be
// written (a read-only file system, or a volume unmounted under the process). Tessera
// v1.0.4 panics, ending the process, when it cannot open its lock file there while it
// sequences an entry (storage/posix/files.go, sequenceBatch), so an upload checks this
// before it hands tessera an entry and answers ErrUnavailable instead, to be retried.
// The directory can still vanish between the check and tessera's open; the check makes
// that a window of microseconds instead of every upload of an outage.
func (l *Embedded) writable() error {
	dir := filepath.Join(l.opts.Dir, tesseraStateDir)
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := syscall.Access(dir, 0o2); err != nil { // W_OK: also EROFS for root
		return fmt.Errorf("%s is not writable: %w", dir, err)
	}
	return nil
}
