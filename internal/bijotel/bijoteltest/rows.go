// Package bijoteltest makes what the original product (BIJOTEL 2.16) writes, from the
// rules in ../shared/LEGACY-BIJOTEL.md, for tests: chains of rows, chain files, exports and
// receipts, valid and tampered. It is written from that description, not from the
// original's code, and it is test-only: nothing outside tests imports it.
package bijoteltest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// SecretHex is the hex HMAC secret the generated chains are sealed with (32 bytes, as the
// original's convention of 64 hex characters).
const SecretHex = "6c6567616379206269206a6f74656c20736563726574206b657920666f72207473"

// Secret is SecretHex decoded.
func Secret() []byte {
	b, err := hex.DecodeString(SecretHex)
	if err != nil {
		panic(err)
	}
	return b
}

// BaseTimeNS is the end time of the first generated span: 2026-06-15T03:00:05Z, a time
// beyond 2^53 nanoseconds, so a float64 round trip would show.
const BaseTimeNS int64 = 1781492405_123456789

// SpanBody is the canonical body the original seals for a span (span_to_dict, then RFC
// 8785). i varies the content: every seventh body is an append_event dict instead, every
// fifth carries replay metadata, and every third non-ASCII text.
func SpanBody(i int) ([]byte, RowMeta) {
	end := BaseTimeNS + int64(i)*1_000_000_007
	meta := RowMeta{
		TimestampNS: end,
		TraceID:     fmt.Sprintf("%032x", 0xabc000+i),
		SpanID:      fmt.Sprintf("%016x", 0x5000+i),
		SpanName:    "chat claude-sonnet-4",
	}
	if i%7 == 6 {
		// append_event: any dict, default columns.
		meta.TraceID, meta.SpanID, meta.SpanName = zeros(32), zeros(16), "audit.event"
		return mustJCS(map[string]any{"event": "key_rotated", "n": i, "actor": "ops@example.org"}), meta
	}
	kind := "CLIENT"
	meta.SpanKind = &kind
	attrs := map[string]any{
		"gen_ai.operation.name":      "chat",
		"gen_ai.provider.name":       "anthropic",
		"gen_ai.request.model":       "claude-sonnet-4",
		"gen_ai.usage.input_tokens":  int64(100 + i),
		"gen_ai.usage.output_tokens": int64(20 + i%50),
		"gen_ai.request.temperature": 0.7,
		"gen_ai.input.messages":      []any{map[string]any{"role": "user", "content": "question " + strconv.Itoa(i)}},
	}
	if i%3 == 1 {
		attrs["gen_ai.input.messages"] = []any{map[string]any{"role": "user", "content": "Grüße, 東京 \U0001F600 #" + strconv.Itoa(i)}}
	}
	if i%5 == 2 {
		out := sha256.Sum256([]byte("output " + strconv.Itoa(i)))
		attrs["bijotel.replay.output_hash"] = hex.EncodeToString(out[:])
		attrs["bijotel.replay.model_version"] = "claude-sonnet-4-20250514"
		attrs["bijotel.replay.deterministic"] = i%2 == 0
	}
	return mustJCS(map[string]any{
		"name":               meta.SpanName,
		"kind":               kind,
		"attributes":         attrs,
		"status_code":        "UNSET",
		"status_description": nil,
		"start_time_ns":      strconv.FormatInt(end-850_000_000, 10),
		"end_time_ns":        strconv.FormatInt(end, 10),
	}), meta
}

// RowMeta are the columns of a row that no hash covers.
type RowMeta struct {
	TimestampNS int64
	TraceID     string
	SpanID      string
	SpanName    string
	SpanKind    *string
}

// Chain seals n rows with secret, seq firstSeq onward, the first linking to firstPrev
// (bijotel.GenesisHash for a chain's first row), the bodies SpanBody(firstSeq-1) onward.
func Chain(secret []byte, firstSeq int64, firstPrev string, n int) []bijotel.Row {
	rows := make([]bijotel.Row, n)
	prev := firstPrev
	for i := range rows {
		seq := firstSeq + int64(i)
		body, meta := SpanBody(int(seq - 1))
		r := bijotel.Row{
			Seq: seq, TimestampNS: meta.TimestampNS, TraceID: meta.TraceID, SpanID: meta.SpanID,
			SpanName: meta.SpanName, SpanKind: meta.SpanKind, CanonicalBody: body,
			CanonicalHash: bijotel.BodyHash(body), PrevHash: prev,
		}
		if meta.SpanKind != nil {
			sem := bijotel.BodyHash(append([]byte("semantic:"), body...))
			r.SemanticBodyHash = &sem
		}
		r.HMACHash = bijotel.RowHMAC(secret, prev, r.CanonicalHash)
		rows[i], prev = r, r.HMACHash
	}
	return rows
}

// Reseal recomputes canonical_hash, and the HMACs of rows[from:] with the links between
// them, as the holder of secret would after editing bodies: a valid chain again.
func Reseal(secret []byte, rows []bijotel.Row, from int) {
	for i := from; i < len(rows); i++ {
		rows[i].CanonicalHash = bijotel.BodyHash(rows[i].CanonicalBody)
		if i > 0 {
			rows[i].PrevHash = rows[i-1].HMACHash
		}
		rows[i].HMACHash = bijotel.RowHMAC(secret, rows[i].PrevHash, rows[i].CanonicalHash)
	}
}

func mustJCS(v any) []byte {
	b, err := canonical.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}
