package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// This file builds chains imported from the original product (docs/PROTOCOL.md §2,
// "Imported rows"): a bridge record at seq 1, the legacy rows behind it, then Cairn's own
// entries, all sealed with testSecret, and exports of them signed by any key.

// importTime is when the test chains were imported.
var importTime = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// legacyEntry is legacy row legacySeq as an imported entry: a BIJOTEL body (no trace_id,
// no span_id) and the legacy row's columns. Its seq, prev_hash and hmac_hash are unset.
func legacyEntry(legacySeq int64) *Entry {
	start := int64(1781492405273456789) + legacySeq*int64(time.Second)
	body := fmt.Sprintf(`{"attributes":{"gen_ai.request.model":"claude-sonnet-4","gen_ai.usage.input_tokens":%d},`+
		`"end_time_ns":"%d","kind":"CLIENT","name":"chat claude-sonnet-4","start_time_ns":"%d","status_code":"UNSET","status_description":null}`,
		100+legacySeq, start+850_000_000, start)
	sum := sha256.Sum256([]byte(body))
	return &Entry{
		TimestampNS: fmt.Sprint(start + 850_000_000), // the original's column is the end time
		TraceID:     fmt.Sprintf("%032x", 0xabc000+legacySeq), SpanID: fmt.Sprintf("%016x", 0x5000+legacySeq),
		SpanName: "chat claude-sonnet-4", SpanKind: "CLIENT",
		CanonicalBody: []byte(body), CanonicalHash: hex.EncodeToString(sum[:]),
	}
}

// importedChain is a chain imported from n legacy rows (legacy seqs 1..n, sealed with
// testSecret, so the legacy chain re-derives), then m entries of Cairn's own: the bridge
// at seq 1, the legacy rows at 2..n+1, Cairn's entries after them. It also returns the
// bridge.
func importedChain(tb testing.TB, n, m int) ([]*Entry, *Bridge) {
	tb.Helper()
	legacy := make([]*Entry, n)
	digest := NewImportDigest()
	legacyMAC := GenesisPrevHash
	for i := range legacy {
		legacy[i] = legacyEntry(int64(i + 1))
		digest.Add(int64(i+1), legacy[i])
		legacyMAC = EntryHMAC(testSecret, legacyMAC, legacy[i].CanonicalHash)
	}
	sum := sha256.Sum256([]byte("the legacy export"))
	b := &Bridge{LegacyFirstSeq: 1, LegacyLastSeq: int64(n), LegacyRows: int64(n), LegacyFirstPrevHash: GenesisPrevHash,
		LegacyHeadHMACHash: legacyMAC, LegacyExportSHA256: hex.EncodeToString(sum[:]),
		LegacyExportCreatedAt: "2026-11-26T10:00:00.123456+00:00", LegacyRowsSHA256: digest.Sum(),
		FirstSeq: 2, LastSeq: int64(n) + 1}
	s, err := NewEntrySealer(testSecret)
	if err != nil {
		tb.Fatal(err)
	}
	bridge, err := s.Seal(1, GenesisPrevHash, b.Body(importTime))
	if err != nil {
		tb.Fatal(err)
	}
	entries := []*Entry{bridge}
	for _, e := range legacy {
		prev := entries[len(entries)-1]
		s.Link(e, prev.Seq+1, prev.HMACHash)
		entries = append(entries, e)
	}
	for range m {
		prev := entries[len(entries)-1]
		e, err := NewEntry(testSecret, prev.Seq+1, prev.HMACHash, testBody(prev.Seq+1, 16))
		if err != nil {
			tb.Fatal(err)
		}
		entries = append(entries, e)
	}
	return entries, b
}

// exportSignedBy is an export of entries, which may be any window of a chain, with the
// header their holder computes from them (chain_signature under testSecret), signed by
// key. Nothing is checked: a tamperer writes it.
func exportSignedBy(tb testing.TB, entries []*Entry, key ed25519.PrivateKey) []byte {
	tb.Helper()
	first, last := entries[0], entries[len(entries)-1]
	h := &ExportHeader{Format: ExportFormat, Version: ExportVersion, ExportedAt: testTime.Format(time.RFC3339),
		EntryCount: last.Seq, FirstSeq: first.Seq, LastSeq: last.Seq, FirstPrevHash: first.PrevHash, LastHMACHash: last.HMACHash,
		ChainSignature: ChainSignature(testSecret, last.HMACHash, last.Seq), EntriesRoot: rootOf(entries)}
	b := []byte(`{"entries":[`)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntryJSON(append(b, '\n'), e)
	}
	b, err := appendSignedHeader(append(b, "\n],"...), h, key)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// relink re-seals the seqs, links and HMACs of entries[from:] under testSecret, as the
// holder of the secret does after changing an entry; entries is a chain from seq 1.
func relink(tb testing.TB, entries []*Entry, from int) {
	tb.Helper()
	s, err := NewEntrySealer(testSecret)
	if err != nil {
		tb.Fatal(err)
	}
	for i := from; i < len(entries); i++ {
		prev := GenesisPrevHash
		if i > 0 {
			prev = entries[i-1].HMACHash
		}
		s.Link(entries[i], int64(i+1), prev)
	}
}
