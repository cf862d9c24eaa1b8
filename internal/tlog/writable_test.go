package tlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestEmbeddedStateGoneIsUnavailable takes the log's state directory away (as a volume
// that is unmounted, or hidden under another mount, would) and requires an upload to be
// ErrUnavailable, to be retried, rather than a panic in tessera that ends the process
// (tessera v1.0.4 panics when it cannot open its lock file); and the upload to succeed
// once the directory is back. The fault test TestLogDownForAWholeAnchorCycle found it.
func TestEmbeddedStateGoneIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	first, _ := record(t, 1)
	if _, err := l.Upload(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	state, away := filepath.Join(dir, ".state"), filepath.Join(t.TempDir(), "state")
	if err := os.Rename(state, away); err != nil {
		t.Fatal(err)
	}
	next, _ := record(t, 2)
	if _, err := l.Upload(t.Context(), next); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("upload with the state directory gone: %v, want ErrUnavailable", err)
	}
	if err := os.Rename(away, state); err != nil {
		t.Fatal(err)
	}
	e, err := l.Upload(t.Context(), next)
	if err != nil {
		t.Fatalf("upload once the directory is back: %v", err)
	}
	if e.Index != 1 {
		t.Errorf("the entry after the outage is at index %d, want 1", e.Index)
	}
}
