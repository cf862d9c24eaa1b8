package tlog

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/transparency-dev/tessera/api/layout"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file keeps an embedded log's directory bound to its key: a directory restored from
// a backup (or reused) opens only under the key that signed its checkpoint.

// ErrKeyMismatch means a directory holds an embedded log whose checkpoint does not verify
// under the key it was opened with. Opening it anyway would sign the same tree under
// another key: a log the receipts it issued do not verify against, published as if
// nothing had happened. Restore the log's own key instead.
var ErrKeyMismatch = errors.New("the embedded log's checkpoint was not signed by this key")

// HoldsLog reports whether dir holds an embedded log: a published checkpoint or
// tessera's tree state. A missing dir holds none.
func HoldsLog(dir string) (bool, error) {
	for _, name := range []string{layout.CheckpointPath, filepath.Join(".state", "treeState")} {
		_, err := os.Stat(filepath.Join(dir, name))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("embedded log: %w", err)
		}
	}
	return false, nil
}

// checkOwnCheckpoint returns ErrKeyMismatch when dir holds a checkpoint that pub did not
// sign (another key, or another origin), and nil when it holds none.
func checkOwnCheckpoint(dir string, pub ed25519.PublicKey) error {
	raw, err := os.ReadFile(filepath.Join(dir, layout.CheckpointPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded log: %w", err)
	}
	if _, err := protocol.OpenCheckpoint(raw, pub); err != nil {
		return fmt.Errorf("embedded log in %s: %w (%w)", dir, ErrKeyMismatch, err)
	}
	return nil
}
