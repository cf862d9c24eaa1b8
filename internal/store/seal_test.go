package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestSealedEntriesPassCheckEntry checks every entry Seal returns with protocol.CheckEntry
// and the chain's links: Seal no longer checks them itself, as they pass by construction
// (see prepare), and this catches the construction breaking. The batches cross the
// chunks Seal builds in parallel.
func TestSealedEntriesPassCheckEntry(t *testing.T) {
	s, _ := newStore(t)
	mac := hmac.New(sha256.New, testSecret)
	prev, next := protocol.GenesisPrevHash, int64(1)
	for _, n := range []int64{1, insertRows - 1, insertRows + 1, 3*insertRows + 7} {
		entries, err := s.Seal(t.Context(), testBodies(next, n))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(entries)) != n {
			t.Fatalf("sealed %d entries of %d", len(entries), n)
		}
		for _, e := range entries {
			if err := protocol.CheckEntry(e, mac); err != nil {
				t.Fatalf("seq %d: %v", e.Seq, err)
			}
			if e.Seq != next || e.PrevHash != prev {
				t.Fatalf("seq %d after %s, want seq %d after %s", e.Seq, e.PrevHash, next, prev)
			}
			prev, next = e.HMACHash, next+1
		}
	}
	if r, err := s.Verify(t.Context(), VerifyOptions{Full: true}); err != nil || r.Checked != next-1 {
		t.Fatalf("verify: %+v, %v", r, err)
	}
}
