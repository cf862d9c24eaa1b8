package store

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

func TestExportVerifiesInEveryTrustMode(t *testing.T) {
	s, _ := newStore(t)
	entries := seal(t, s, 1500, 700)
	pub := testKey.Public().(ed25519.PublicKey)
	modes := map[string]protocol.VerifyOptions{
		"secret":     {Secret: testSecret},
		"public key": {PublicKey: pub},
		"both":       {Secret: testSecret, PublicKey: pub},
	}
	for _, c := range []struct {
		name       string
		o          ExportOptions
		from, to   int64
		headerOnly bool
	}{
		{"whole chain", ExportOptions{}, 1, 1500, false},
		{"range", ExportOptions{From: 600, To: 1100}, 600, 1100, false},
		{"from", ExportOptions{From: 1500}, 1500, 1500, false},
		{"header only", ExportOptions{HeaderOnly: true}, 1, 1500, true},
		{"range, header only", ExportOptions{From: 2, To: 513, HeaderOnly: true}, 2, 513, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			o := c.o
			o.Key, o.ExportedAt = testKey, testTime
			var calls, lastDone int64
			o.Progress = func(done, _ int64) { calls, lastDone = calls+1, done }
			h, err := s.Export(t.Context(), &buf, o)
			if err != nil {
				t.Fatal(err)
			}
			first, last := entries[c.from-1], entries[c.to-1]
			want := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion,
				ExportedAt: "2026-11-21T12:00:00Z", EntryCount: c.to, FirstSeq: c.from, LastSeq: c.to,
				FirstPrevHash: first.PrevHash, LastHMACHash: last.HMACHash,
				ChainSignature: protocol.ChainSignature(testSecret, last.HMACHash, c.to), EntriesRoot: h.EntriesRoot}
			if *h != want {
				t.Errorf("header %+v\nwant %+v", *h, want)
			}
			if calls == 0 || lastDone != c.to-c.from+1 {
				t.Errorf("%d progress calls, the last with %d done", calls, lastDone)
			}
			for mode, vo := range modes {
				r, err := protocol.VerifyExport(bytes.NewReader(buf.Bytes()), vo)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				wantEntries := c.to - c.from + 1
				if c.headerOnly {
					wantEntries = 0
				}
				if r.Entries != wantEntries || *r.Header != *h {
					t.Errorf("%s: %d entries, header %+v", mode, r.Entries, *r.Header)
				}
			}
		})
	}
	// A header-only export commits to the same entries_root as the full one.
	full, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey, ExportedAt: testTime})
	if err != nil {
		t.Fatal(err)
	}
	headerOnly, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey, ExportedAt: testTime, HeaderOnly: true})
	if err != nil || *full != *headerOnly {
		t.Errorf("header-only %+v (%v), full %+v", headerOnly, err, full)
	}
}

func TestExportRefusesBadInput(t *testing.T) {
	s, _ := newStore(t)
	seal(t, s, 10, 10)
	if _, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey[:10]}); !errors.Is(err, protocol.ErrMalformed) {
		t.Errorf("short key: %v", err)
	}
	if _, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey, From: 11}); err == nil {
		t.Error("window past the end: no error")
	}
	// The zero ExportedAt means now.
	h, err := s.Export(t.Context(), discard{}, ExportOptions{Key: testKey})
	if err != nil || h.ExportedAt < "2026" {
		t.Errorf("exported_at %q, %v", h.ExportedAt, err)
	}
}
