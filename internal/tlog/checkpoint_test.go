package tlog

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The embedded log's checkpoint covers what it logged and is its own signed note.
func TestEmbeddedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir)
	for n := range 3 {
		body, _ := record(t, n)
		if _, err := l.Upload(t.Context(), body); err != nil {
			t.Fatal(err)
		}
	}
	cp, raw, err := l.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 3 {
		t.Errorf("checkpoint size %d, want 3", cp.Size)
	}
	pub, _ := l.PublicKey(t.Context())
	if _, err := protocol.OpenCheckpoint(raw, pub); err != nil {
		t.Errorf("the returned note does not verify under the log key: %v", err)
	}
}

// A checkpoint file that another key signed is refused, not returned.
func TestEmbeddedCheckpointRefusesForeignNote(t *testing.T) {
	mine, theirs := t.TempDir(), t.TempDir()
	l := openTestLog(t, mine)
	other, err := GenerateLogKey("cairn.test/embedded")
	if err != nil {
		t.Fatal(err)
	}
	o := openTestLogWithKey(t, theirs, other)
	body, _ := record(t, 7)
	if _, err := o.Upload(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	foreign, err := os.ReadFile(filepath.Join(theirs, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "checkpoint"), foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Checkpoint(t.Context()); err == nil {
		t.Fatal("a checkpoint signed by another log's key was returned")
	}
}

// Rekor's signed tree head verifies under its key and grows with an upload; under another
// pinned key it is refused.
func TestRekorCheckpoint(t *testing.T) {
	r := newRekor(t, RekorOptions{})
	before, _, err := r.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Upload(t.Context(), freshRecord(t)); err != nil {
		t.Fatal(err)
	}
	after, _, err := r.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after.Size <= before.Size {
		t.Errorf("tree size %d after an upload, was %d", after.Size, before.Size)
	}
	pemText, err := marshalKeyPEM(ed25519.NewKeyFromSeed(make([]byte, 32)).Public())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = newRekor(t, RekorOptions{PublicKeyPEM: pemText}).Checkpoint(t.Context())
	if !errors.Is(err, protocol.ErrNotIncluded) && !errors.Is(err, protocol.ErrMismatch) {
		t.Fatalf("tree head under another pinned key: %v", err)
	}
}
