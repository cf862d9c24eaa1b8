package sidecar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"time"
)

// incomingDir is the store's subdirectory of content being received.
const incomingDir = ".incoming"

// Incoming is a sidecar being received: its content streamed to a temporary file of the
// store, hashed as it is written. Promote keeps it under its digest; Discard removes it.
// It is not safe for concurrent use.
type Incoming struct {
	f    *os.File
	h    hash.Hash
	size int64
	done bool // closed: promoted or discarded
}

// ErrTooLarge is the error of a write that would take an Incoming past MaxBytes.
var ErrTooLarge = fmt.Errorf("sidecar is over %d bytes", MaxBytes)

// Incoming starts receiving a sidecar.
func (s *Store) Incoming() (*Incoming, error) {
	dir := filepath.Join(s.dir, incomingDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("sidecar store: %w", err)
	}
	f, err := os.CreateTemp(dir, "in-*")
	if err != nil {
		return nil, fmt.Errorf("sidecar store: %w", err)
	}
	return &Incoming{f: f, h: sha256.New()}, nil
}

// Write appends p to the content; past MaxBytes it writes nothing and fails with
// ErrTooLarge.
func (in *Incoming) Write(p []byte) (int, error) {
	if in.size+int64(len(p)) > MaxBytes {
		return 0, ErrTooLarge
	}
	n, err := in.f.Write(p)
	in.h.Write(p[:n])
	in.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("sidecar store: %w", err)
	}
	return n, nil
}

// Size is how many bytes were written.
func (in *Incoming) Size() int64 { return in.size }

// Digest is the lowercase hex SHA-256 of what was written.
func (in *Incoming) Digest() string { return hex.EncodeToString(in.h.Sum(nil)) }

// Discard removes the temporary file; it does nothing once the content was promoted or
// discarded.
func (in *Incoming) Discard() {
	if in == nil || in.done {
		return
	}
	in.done = true
	_ = in.f.Close()
	_ = os.Remove(in.f.Name())
}

// Promote keeps in's content under its digest: synced and renamed into place, or, when
// the store holds that content already, the temporary file removed and the stored one's
// time renewed (so that Sweep, which spares recent files, leaves it to the submission
// that now names it). Either way in is done.
func (s *Store) Promote(in *Incoming) (err error) {
	if in.done {
		return errors.New("sidecar store: promote of a discarded sidecar")
	}
	defer in.Discard()
	s.mu.Lock()
	defer s.mu.Unlock()
	digest := in.Digest()
	final := s.path(digest)
	if _, err := s.Get(digest); err == nil {
		now := time.Now()
		return os.Chtimes(final, now, now)
	} else if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
		return err
	}
	if err := in.f.Sync(); err != nil {
		return fmt.Errorf("sidecar store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o750); err != nil {
		return fmt.Errorf("sidecar store: %w", err)
	}
	if err := os.Rename(in.f.Name(), final); err != nil {
		return fmt.Errorf("sidecar store: %w", err)
	}
	in.done = true
	_ = in.f.Close()
	return syncDir(filepath.Dir(final))
}

// syncDir syncs the directory dir, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sidecar store: %w", err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sidecar store: %w", err)
	}
	return nil
}
