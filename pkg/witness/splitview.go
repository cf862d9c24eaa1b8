package witness

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrNotWitnessed means a checkpoint's cosignatures do not meet a witness policy.
var ErrNotWitnessed = errors.New("checkpoint not witnessed")

// ErrSplitView means two checkpoints a log signed contradict each other: the log showed
// different trees to different readers, or rewrote its history.
var ErrSplitView = errors.New("split view")

// SplitViewError is a split view and its evidence: both checkpoints, as signed.
type SplitViewError struct {
	// Reason says how they contradict each other.
	Reason string
	// Seen and Offered are the two checkpoint notes: the one known before, and the new one.
	Seen, Offered []byte
}

func (e *SplitViewError) Error() string {
	return fmt.Sprintf("split view: %s\n\nthe checkpoint seen before:\n\n%s\nthe checkpoint now:\n\n%s", e.Reason, e.Seen, e.Offered)
}

// Unwrap makes errors.Is(err, ErrSplitView) true.
func (e *SplitViewError) Unwrap() error { return ErrSplitView }

// CompareCheckpoints returns a *SplitViewError when seen and offered, two checkpoints of
// one log, each verified under its key, state the same size with different roots; nil
// otherwise (checkpoints of different sizes need a consistency proof: see
// CheckConsistency).
func CompareCheckpoints(seenNote []byte, seen *protocol.Checkpoint, offeredNote []byte, offered *protocol.Checkpoint) error {
	if seen.Origin == offered.Origin && seen.Size == offered.Size && !bytes.Equal(seen.Root, offered.Root) {
		return &SplitViewError{Reason: fmt.Sprintf("two checkpoints of %s of size %d with different roots", seen.Origin, seen.Size),
			Seen: seenNote, Offered: offeredNote}
	}
	return nil
}
