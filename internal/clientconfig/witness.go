package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// Files of witnessing: the witness policy pinned for a federation
// (federations/<host>/witnesses.policy), and per log the largest checkpoint this machine
// verified (checkpoints/<log ID>.json), against which a later one of the same size must
// not state another root.
const (
	witnessPolicyFile = "witnesses.policy"
	checkpointsDir    = "checkpoints"
)

// WitnessPolicy returns the witness policy pinned for service and its path; nil when none
// is pinned.
func (d Dir) WitnessPolicy(service string) (*witness.Policy, string, error) {
	dir, err := d.FederationDir(service)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, witnessPolicyFile)
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	p, err := witness.ParsePolicy(text)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return p, path, nil
}

// SaveWitnessPolicy pins the witness policy text for service, once it parses.
func (d Dir) SaveWitnessPolicy(service string, text []byte) (string, error) {
	if _, err := witness.ParsePolicy(text); err != nil {
		return "", err
	}
	dir, err := d.FederationDir(service)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, witnessPolicyFile)
	return path, atomicfile.Write(path, text, 0o600)
}

// seenCheckpoint is a checkpoint this machine verified, as remembered.
type seenCheckpoint struct {
	Origin string `json:"origin"`
	Size   uint64 `json:"size"`
	Root   []byte `json:"root"`
	Note   string `json:"note"`
}

var logIDPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// SeeCheckpoint compares note, a checkpoint of the log logID verified under its key (cp
// is its parse), with the largest checkpoint of that log this machine saw, and remembers
// note when it is larger. A checkpoint of the same size with another root is a
// *witness.SplitViewError stating both.
func (d Dir) SeeCheckpoint(logID string, note []byte, cp *protocol.Checkpoint) error {
	if !logIDPattern.MatchString(logID) {
		return fmt.Errorf("%w: log ID %q is not 64 hex digits", protocol.ErrMalformed, logID)
	}
	path := filepath.Join(string(d), checkpointsDir, logID+".json")
	var seen seenCheckpoint
	found, err := readJSON(path, &seen)
	if err != nil {
		return err
	}
	if found {
		prev := &protocol.Checkpoint{Origin: seen.Origin, Size: seen.Size, Root: seen.Root}
		if err := witness.CompareCheckpoints([]byte(seen.Note), prev, note, cp); err != nil {
			return err
		}
		if cp.Size <= seen.Size {
			return nil
		}
	}
	return writeJSON(path, seenCheckpoint{Origin: cp.Origin, Size: cp.Size, Root: cp.Root, Note: string(note)})
}
