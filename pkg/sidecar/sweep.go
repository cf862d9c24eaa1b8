package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// SweepResult says what a Sweep removed.
type SweepResult struct {
	// Incoming counts the files of content being received that a request never
	// promoted nor discarded (the process died first).
	Incoming int
	// Unnamed counts the stored sidecars no submission names.
	Unnamed int
	// Bytes is what the removed files held.
	Bytes int64
}

// Sweep removes what no one will read: files under .incoming, and stored files (and
// stray temporary ones) that named does not claim, in both cases only those last
// changed before cutoff, so that a request still receiving or promoting its sidecars
// keeps them. cutoff is the caller's: the longest a request may live, before now.
// named reports whether a submission names a digest; it is asked under the lock that
// Promote takes, so in this process a sidecar promoted again is not removed meanwhile.
func (s *Store) Sweep(named func(digest string) (bool, error), cutoff time.Time) (SweepResult, error) {
	var res SweepResult
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	} else if err != nil {
		return res, fmt.Errorf("sidecar store: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || (e.Name() != incomingDir && !shardName(e.Name())) {
			continue
		}
		sub := filepath.Join(s.dir, e.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			if f.IsDir() {
				continue
			}
			removed, size, err := s.sweepFile(filepath.Join(sub, f.Name()), e.Name() == incomingDir, named, cutoff)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			switch {
			case removed && e.Name() == incomingDir:
				res.Incoming++
			case removed:
				res.Unnamed++
			}
			if removed {
				res.Bytes += size
			}
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("sidecar store: sweep: %w", errors.Join(errs...))
	}
	return res, nil
}

// sweepFile removes path if it was last changed before cutoff and is incoming, not a
// stored sidecar's name, or a sidecar named does not claim; it reports whether it did
// and the file's size.
func (s *Store) sweepFile(path string, incoming bool, named func(string) (bool, error), cutoff time.Time) (bool, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	} else if err != nil {
		return false, 0, err
	}
	if !info.ModTime().Before(cutoff) {
		return false, 0, nil
	}
	digest := filepath.Base(path)
	if !incoming && ValidDigest(digest) && filepath.Base(filepath.Dir(path)) == digest[:2] {
		keep, err := named(digest)
		if err != nil || keep {
			return false, 0, err
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, 0, err
	}
	return true, info.Size(), nil
}

// shardName reports whether name is a store subdirectory's: two lowercase hex digits.
func shardName(name string) bool { return len(name) == 2 && lowerHex(name) }

// Usage is the bytes of the sidecars stored, the files under .incoming left out.
func (s *Store) Usage() (int64, error) {
	var total int64
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("sidecar store: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || !shardName(e.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(s.dir, e.Name()))
		if err != nil {
			return 0, fmt.Errorf("sidecar store: %w", err)
		}
		for _, f := range files {
			if info, err := f.Info(); err == nil && info.Mode().IsRegular() {
				total += info.Size()
			}
		}
	}
	return total, nil
}
