package sidecar

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Store keeps sidecars as files named by their digest, <dir>/<2 hex>/<64 hex>, in a
// directory every replica mounts (beside the embedded log, on the same volume). Only
// digests it computed or checked are used as paths. It is safe for concurrent use, by
// several processes too: a file is written under a temporary name, synced and renamed.
type Store struct {
	dir string
}

// NewStore returns the store in dir, which is made on first Put.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// path is the file of digest, which must be valid.
func (s *Store) path(digest string) string {
	return filepath.Join(s.dir, digest[:2], digest)
}

// Put stores content and returns its digest. Content already stored (and still
// matching its digest) is not written again.
func (s *Store) Put(content []byte) (string, error) {
	if len(content) > MaxBytes {
		return "", fmt.Errorf("sidecar is %d bytes, over %d", len(content), MaxBytes)
	}
	digest := Digest(content)
	if _, err := s.Get(digest); err == nil {
		return digest, nil
	} else if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
		return "", err
	}
	dir := filepath.Dir(s.path(digest))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("sidecar store: %w", err)
	}
	if err := writeAtomic(dir, s.path(digest), content); err != nil {
		return "", fmt.Errorf("sidecar store: %w", err)
	}
	return digest, nil
}

// writeAtomic writes content to a temporary file in dir, syncs it, renames it to path
// and syncs dir, so that path holds all of content or does not exist.
func writeAtomic(dir, path string, content []byte) (err error) {
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(content); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// Get returns the content of digest, checked against it: ErrInvalidDigest for a
// malformed digest, ErrNotFound, ErrCorrupt for a file that no longer matches.
func (s *Store) Get(digest string) ([]byte, error) {
	if !ValidDigest(digest) {
		return nil, ErrInvalidDigest
	}
	f, err := os.Open(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("sidecar store: %w", err)
	}
	defer func() { _ = f.Close() }()
	content, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("sidecar store: %w", err)
	}
	if len(content) > MaxBytes || Digest(content) != digest {
		return nil, ErrCorrupt
	}
	return content, nil
}
