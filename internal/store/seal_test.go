package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
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

// TestPrepareAheadOfSeal prepares a batch, seals another, then the first: it takes its
// place when sealed, not when prepared, and seals once.
func TestPrepareAheadOfSeal(t *testing.T) {
	s, _ := newStore(t)
	ahead := s.Prepare(testBodies(3, 2))
	if _, err := s.Seal(t.Context(), testBodies(1, 2)); err != nil {
		t.Fatal(err)
	}
	entries, err := s.SealBatch(t.Context(), ahead)
	if err != nil || len(entries) != 2 || entries[0].Seq != 3 {
		t.Fatalf("sealed %+v, %v; want seq 3 and 4", entries, err)
	}
	if _, err := s.SealBatch(t.Context(), ahead); err == nil {
		t.Fatal("a batch sealed twice")
	}
	if es, err := s.SealBatch(t.Context(), s.Prepare(nil)); es != nil || err != nil {
		t.Fatalf("seal of an empty batch: %v, %v", es, err)
	}
	bad := testBodies(5, 1)
	bad[0].SpanID = "x"
	if _, err := s.SealBatch(t.Context(), s.Prepare(bad)); !errors.Is(err, protocol.ErrMalformed) {
		t.Fatalf("a malformed body: %v", err)
	}
	if r, err := s.Verify(t.Context(), VerifyOptions{Full: true}); err != nil || r.Checked != 4 {
		t.Fatalf("verify: %+v, %v", r, err)
	}
}
