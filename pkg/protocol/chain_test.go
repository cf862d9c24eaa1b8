package protocol

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
	"time"
)

// testSecret and testKey are fixed so that exports are byte-for-byte reproducible.
var (
	testSecret = bytes.Repeat([]byte{0x5c}, 32)
	testKey    = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	otherKey   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	testTime   = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
)

// testBody returns the span body of synthetic entry seq, with about attrBytes of attributes.
func testBody(seq int64, attrBytes int) SpanBody {
	start := testTime.UnixNano() + seq*int64(time.Second)
	return SpanBody{
		Name: fmt.Sprintf("chat model-%d", seq%3),
		Kind: "client",
		Attributes: map[string]any{
			"gen_ai.system":        "openai",
			"gen_ai.request.model": "gpt-4o",
			"gen_ai.usage.tokens":  seq % 1000,
			"gen_ai.prompt":        strings.Repeat("p", attrBytes),
			"note":                 "naïve \"quoted\" ✓",
		},
		StatusCode:  "OK",
		StartTimeNS: start,
		EndTimeNS:   start + 1500,
		TraceID:     fmt.Sprintf("%032x", seq),
		SpanID:      fmt.Sprintf("%016x", seq),
	}
}

// testChain seals n entries from seq 1.
func testChain(tb testing.TB, n int, attrBytes int) []*Entry {
	tb.Helper()
	entries := make([]*Entry, 0, n)
	prev := GenesisPrevHash
	for seq := int64(1); seq <= int64(n); seq++ {
		e, err := NewEntry(testSecret, seq, prev, testBody(seq, attrBytes))
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, e)
		prev = e.HMACHash
	}
	return entries
}

// writeExport writes entries as an export signed with key.
func writeExport(tb testing.TB, entries []*Entry, key ed25519.PrivateKey, headerOnly bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewExportWriter(&buf, ExportOptions{Secret: testSecret, Key: key, ExportedAt: testTime, HeaderOnly: headerOnly})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Write(e); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestExportRoundTripInEveryMode(t *testing.T) {
	pub := testKey.Public().(ed25519.PublicKey)
	for name, headerOnly := range map[string]bool{"full": false, "header-only": true} {
		export := writeExport(t, testChain(t, 5, 64), testKey, headerOnly)
		for mode, opts := range map[string]VerifyOptions{
			"secret":     {Secret: testSecret},
			"public key": {PublicKey: pub},
			"both":       {Secret: testSecret, PublicKey: pub},
		} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				r, err := VerifyExport(bytes.NewReader(export), opts)
				if err != nil {
					t.Fatalf("VerifyExport: %v\n%s", err, export)
				}
				wantEntries := int64(5)
				if headerOnly {
					wantEntries = 0
				}
				if r.Entries != wantEntries || r.Header.LastSeq != 5 || r.Header.EntryCount != 5 {
					t.Errorf("report %+v, header %+v", r, r.Header)
				}
			})
		}
	}
}
