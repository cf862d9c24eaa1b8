package tlog

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// copyDir copies the files under src to dst, as a backup and its restore do.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A log restored from a copy of its directory, with its key, holds the same entries at the
// same indexes (with or without the leaf index, a cache) and grows from where it was.
func TestEmbeddedRestoredFromCopy(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	var uploaded []*Entry
	for n := range 3 {
		body, _ := record(t, n)
		e, err := l.Upload(t.Context(), body)
		if err != nil {
			t.Fatal(err)
		}
		uploaded = append(uploaded, e)
	}
	_, before, err := l.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, withIndex := range map[string]bool{"whole copy": true, "copy without the leaf index": false} {
		t.Run(name, func(t *testing.T) {
			restored := t.TempDir()
			copyDir(t, dir, restored)
			if !withIndex {
				for _, f := range []string{"leaf-index.db", "leaf-index.db-wal", "leaf-index.db-shm"} {
					if err := os.Remove(filepath.Join(restored, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				}
			}
			r := openTestLog(t, restored)
			for _, e := range uploaded {
				body, _ := record(t, int(e.Index))
				again, err := r.Upload(t.Context(), body)
				if err != nil {
					t.Fatal(err)
				}
				if again.Index != e.Index || again.UUID != e.UUID {
					t.Errorf("entry %d re-uploaded to the restored log at %d (%s), want %d (%s)", e.Index, again.Index, again.UUID, e.Index, e.UUID)
				}
			}
			next, _ := record(t, 3)
			e, err := r.Upload(t.Context(), next)
			if err != nil {
				t.Fatal(err)
			}
			if e.Index != 3 {
				t.Errorf("the restored log appended at %d, want 3", e.Index)
			}
			cp, _, err := r.Checkpoint(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			old, err := protocol.OpenCheckpoint(before, r.pub)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Size != 4 || cp.Origin != old.Origin {
				t.Errorf("restored log's checkpoint: %+v, want size 4 and origin %q", cp, old.Origin)
			}
		})
	}
}

// A directory that holds a log opens only under the key that signed its checkpoint: a
// log restored without its key (so a new one was generated) or with another federation's
// is refused with ErrKeyMismatch, and nothing in the directory changes, so the log is
// never re-signed under a key its receipts do not name.
func TestEmbeddedRefusesAnotherKey(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	body, _ := record(t, 1)
	if _, err := l.Upload(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if holds, err := HoldsLog(dir); err != nil || !holds {
		t.Fatalf("HoldsLog of a written log: %t, %v", holds, err)
	}
	checkpoint, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	sameOrigin, err := GenerateLogKey("cairn.test/embedded")
	if err != nil {
		t.Fatal(err)
	}
	otherOrigin, err := GenerateLogKey("cairn.test/other")
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{"a new key of the same origin": sameOrigin, "another log's key": otherOrigin} {
		t.Run(name, func(t *testing.T) {
			l, err := OpenEmbedded(t.Context(), EmbeddedOptions{Dir: dir, PrivateKey: key})
			if err == nil {
				_ = l.Close(t.Context())
				t.Fatal("opened a log under a key that did not sign its checkpoint")
			}
			if !errors.Is(err, ErrKeyMismatch) {
				t.Fatalf("open under another key: %v, want ErrKeyMismatch", err)
			}
			now, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
			if err != nil || !bytes.Equal(now, checkpoint) {
				t.Errorf("the refused open changed the checkpoint: %q, %v", now, err)
			}
		})
	}
	// Its own key still opens it.
	l = openTestLog(t, dir)
	if e, err := l.Upload(t.Context(), body); err != nil || e.Index != 0 {
		t.Errorf("reopened under its key: %+v, %v", e, err)
	}
}

func TestHoldsLog(t *testing.T) {
	empty := t.TempDir()
	for name, dir := range map[string]string{"empty": empty, "missing": filepath.Join(empty, "absent")} {
		if holds, err := HoldsLog(dir); err != nil || holds {
			t.Errorf("HoldsLog of an %s directory: %t, %v", name, holds, err)
		}
	}
	dir := t.TempDir()
	openTestLog(t, dir) // a new log publishes its empty checkpoint
	if holds, err := HoldsLog(dir); err != nil || !holds {
		t.Errorf("HoldsLog of an opened log: %t, %v", holds, err)
	}
}
