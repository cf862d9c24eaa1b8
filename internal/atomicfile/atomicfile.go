// Package atomicfile writes files whole: readers see the old file or the new one, never a
// part, and a crash leaves no half-written file in place.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes b to path with mode perm: a temporary file in the same directory (made,
// with its parents, mode 0700 when missing), synced, then renamed over path.
func Write(path string, b []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
