package sidecar

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps sidecars as files named by their digest, <dir>/<2 hex>/<64 hex>, in a
// directory every replica mounts (beside the embedded log, on the same volume). Only
// digests it computed or checked are used as paths. It is safe for concurrent use, by
// several processes too: content is streamed to a file under <dir>/.incoming
// (Incoming), synced, and renamed into place only when the caller keeps it (Promote);
// what a crash leaves there, and files no submission names, Sweep removes.
type Store struct {
	dir string
	// mu orders Promote and Sweep in this process: a file being promoted again is not
	// swept between the two.
	mu sync.Mutex
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
	in, err := s.Incoming()
	if err != nil {
		return "", err
	}
	defer in.Discard()
	if _, err := in.Write(content); err != nil {
		return "", err
	}
	if err := s.Promote(in); err != nil {
		return "", err
	}
	return in.Digest(), nil
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
