package chain_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// testSecret is the chain secret of every test chain.
var testSecret = []byte("cairn-chain-test-secret-32-bytes")

// chainSealer is a Sealer that really chains: it seals each body with protocol.NewEntry
// after the previous entry's hmac_hash, assigning consecutive seqs from 1, and keeps the
// entries so the chain can be exported and verified. A batch is sealed whole or not at
// all. It records the size of every Seal call.
type chainSealer struct {
	mu      sync.Mutex
	entries []*protocol.Entry
	batches []int
	err     error // returned by Seal, when set, before sealing anything
}

func (s *chainSealer) Seal(ctx context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	prev, seq := protocol.GenesisPrevHash, int64(len(s.entries))
	if seq > 0 {
		prev = s.entries[seq-1].HMACHash
	}
	sealed := make([]*protocol.Entry, 0, len(bodies))
	for _, body := range bodies {
		seq++
		e, err := protocol.NewEntry(testSecret, seq, prev, body)
		if err != nil {
			return nil, err
		}
		sealed = append(sealed, e)
		prev = e.HMACHash
	}
	s.entries = append(s.entries, sealed...)
	s.batches = append(s.batches, len(bodies))
	return sealed, nil
}

// sealed returns a copy of the entries sealed so far and the size of each Seal call.
func (s *chainSealer) sealed() ([]*protocol.Entry, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*protocol.Entry(nil), s.entries...), append([]int(nil), s.batches...)
}

// verifyChain writes entries as a signed cairn-chain-v2 export and checks that
// protocol.VerifyExport accepts it with both the secret and the signing key.
func verifyChain(t *testing.T, entries []*protocol.Entry) {
	t.Helper()
	if len(entries) == 0 {
		t.Fatal("verifyChain: no entries")
	}
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := protocol.NewExportWriter(&buf, protocol.ExportOptions{Secret: testSecret, Key: key, ExportedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Write(e); err != nil {
			t.Fatalf("write entry %d: %v", e.Seq, err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	report, err := protocol.VerifyExport(&buf, protocol.VerifyOptions{Secret: testSecret, PublicKey: pub})
	if err != nil {
		t.Fatalf("VerifyExport: %v", err)
	}
	if report.Entries != int64(len(entries)) || !report.HMACsChecked || !report.KeyTrusted {
		t.Fatalf("VerifyExport report = %+v, want %d entries, HMACs checked, key trusted", report, len(entries))
	}
}

// errSealer is the error a failing chainSealer returns.
var errSealer = errors.New("store unavailable")
