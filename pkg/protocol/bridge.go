package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// BridgeSpanName is the name of a bridge record's span body.
const BridgeSpanName = "cairn.import.bijotel"

// bridgeAttr prefixes every attribute of a bridge record.
const bridgeAttr = "cairn.import."

// Bridge is the record that begins a chain imported from the original product (BIJOTEL):
// entry 1, a span body named BridgeSpanName whose attributes bind the legacy chain as it
// was verified, followed by the legacy rows as entries FirstSeq..LastSeq whose bodies are
// the legacy canonical bodies byte for byte (BodyImported). docs/PROTOCOL.md §2 states
// the rules.
type Bridge struct {
	// LegacyFirstSeq and LegacyLastSeq are the legacy chain's first and last seq, and
	// LegacyRows its row count (LegacyLastSeq-LegacyFirstSeq+1: seqs without gaps).
	LegacyFirstSeq, LegacyLastSeq, LegacyRows int64
	// LegacyFirstPrevHash is the legacy first row's prev_hash: 64 zeros unless the legacy
	// chain had its start archived.
	LegacyFirstPrevHash string
	// LegacyHeadHMACHash is the hmac_hash of the legacy chain's last row.
	LegacyHeadHMACHash string
	// LegacyExportSHA256 is the hex SHA-256 of the legacy export written at import, in
	// the original's format, and LegacyExportCreatedAt its created_at member, so that the
	// same export can be written again byte for byte.
	LegacyExportSHA256, LegacyExportCreatedAt string
	// LegacyRowsSHA256 is the ImportDigest of the imported entries: it binds their
	// columns, which their bodies do not repeat.
	LegacyRowsSHA256 string
	// FirstSeq and LastSeq are the seqs of the imported entries in this chain.
	FirstSeq, LastSeq int64
}

// Body is the bridge's span body, sealed at seq 1; at is the import's time. Its trace and
// span IDs are taken from LegacyRowsSHA256, so the record carries no random value.
func (b *Bridge) Body(at time.Time) SpanBody {
	return SpanBody{
		Name: BridgeSpanName, Kind: "internal", StatusCode: "OK",
		StartTimeNS: at.UnixNano(), EndTimeNS: at.UnixNano(),
		TraceID: b.LegacyRowsSHA256[:32], SpanID: b.LegacyRowsSHA256[32:48],
		Attributes: map[string]any{
			bridgeAttr + "source":                   "bijotel",
			bridgeAttr + "first_seq":                b.FirstSeq,
			bridgeAttr + "last_seq":                 b.LastSeq,
			bridgeAttr + "legacy_first_seq":         b.LegacyFirstSeq,
			bridgeAttr + "legacy_last_seq":          b.LegacyLastSeq,
			bridgeAttr + "legacy_rows":              b.LegacyRows,
			bridgeAttr + "legacy_first_prev_hash":   b.LegacyFirstPrevHash,
			bridgeAttr + "legacy_head_hmac_hash":    b.LegacyHeadHMACHash,
			bridgeAttr + "legacy_export_sha256":     b.LegacyExportSHA256,
			bridgeAttr + "legacy_export_created_at": b.LegacyExportCreatedAt,
			bridgeAttr + "legacy_rows_sha256":       b.LegacyRowsSHA256,
		},
	}
}

// ParseBridge returns the bridge record e holds, or nil when e's span_name column is not
// BridgeSpanName. A record of that name that is not a bridge at seq 1 as docs/PROTOCOL.md
// §2 states it is an error wrapping ErrMalformed: its body must be a span body named
// BridgeSpanName, of kind "internal", status "OK" with an empty description, that starts
// and ends at one time, whose trace_id and span_id are the first 32 and next 16 hex digits
// of legacy_rows_sha256, and whose attributes are exactly the eleven of the table, of
// their types, agreeing with each other. e must have passed CheckEntry.
func ParseBridge(e *Entry) (*Bridge, error) {
	if e.SpanName != BridgeSpanName {
		return nil, nil
	}
	b, err := parseBridge(e)
	if err != nil {
		return nil, fmt.Errorf("%w: bridge record: %w", ErrMalformed, err)
	}
	return b, nil
}

// bridgeBody is the part of a bridge record's body that parseBridge reads; string members
// are pointers so that a missing one is told from an empty one.
type bridgeBody struct {
	Name              *string                    `json:"name"`
	Kind              *string                    `json:"kind"`
	StatusCode        *string                    `json:"status_code"`
	StatusDescription *string                    `json:"status_description"`
	StartTimeNS       *string                    `json:"start_time_ns"`
	EndTimeNS         *string                    `json:"end_time_ns"`
	TraceID           *string                    `json:"trace_id"`
	SpanID            *string                    `json:"span_id"`
	Attributes        map[string]json.RawMessage `json:"attributes"`
}

// bridgeAttributes is how many attributes a bridge record has: those Body writes.
const bridgeAttributes = 11

// parseBridge is ParseBridge for an entry named BridgeSpanName, with errors that wrap no
// sentinel.
func parseBridge(e *Entry) (*Bridge, error) {
	var body bridgeBody
	if err := json.Unmarshal(e.CanonicalBody, &body); err != nil {
		return nil, err
	}
	var b Bridge
	var source string
	fields := []struct {
		name string
		dst  any
	}{
		{"source", &source}, {"first_seq", &b.FirstSeq}, {"last_seq", &b.LastSeq},
		{"legacy_first_seq", &b.LegacyFirstSeq}, {"legacy_last_seq", &b.LegacyLastSeq},
		{"legacy_rows", &b.LegacyRows}, {"legacy_first_prev_hash", &b.LegacyFirstPrevHash},
		{"legacy_head_hmac_hash", &b.LegacyHeadHMACHash}, {"legacy_export_sha256", &b.LegacyExportSHA256},
		{"legacy_export_created_at", &b.LegacyExportCreatedAt}, {"legacy_rows_sha256", &b.LegacyRowsSHA256},
	}
	for _, f := range fields {
		raw, ok := body.Attributes[bridgeAttr+f.name]
		if !ok {
			return nil, fmt.Errorf("no attribute %s%s", bridgeAttr, f.name)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return nil, fmt.Errorf("%s%s: %w", bridgeAttr, f.name, err)
		}
	}
	if len(body.Attributes) != bridgeAttributes {
		return nil, fmt.Errorf("%d attributes, want exactly the %d of a bridge record", len(body.Attributes), bridgeAttributes)
	}
	if err := b.check(e.Seq, source); err != nil {
		return nil, err
	}
	if err := body.check(&b); err != nil {
		return nil, err
	}
	return &b, nil
}

// check reports the first member of a bridge record's body that is not as Body writes it
// for b.
func (body *bridgeBody) check(b *Bridge) error {
	for _, m := range [...]struct {
		name string
		got  *string
		want string
	}{
		{"name", body.Name, BridgeSpanName},
		{"kind", body.Kind, "internal"},
		{"status_code", body.StatusCode, "OK"},
		{"status_description", body.StatusDescription, ""},
		{"trace_id", body.TraceID, b.LegacyRowsSHA256[:32]},
		{"span_id", body.SpanID, b.LegacyRowsSHA256[32:48]},
	} {
		switch {
		case m.got == nil:
			return fmt.Errorf("body has no string member %s", m.name)
		case *m.got != m.want:
			return fmt.Errorf("body member %s is %s, want %s", m.name, Quote(*m.got), Quote(m.want))
		}
	}
	if body.StartTimeNS == nil || body.EndTimeNS == nil || *body.StartTimeNS != *body.EndTimeNS {
		return fmt.Errorf("body's start_time_ns and end_time_ns are not one time, the import's")
	}
	return nil
}

// check reports the first thing about a parsed bridge at seq that is not as the rules say.
func (b *Bridge) check(seq int64, source string) error {
	switch {
	case seq != 1:
		return fmt.Errorf("at seq %d; a bridge begins its chain", seq)
	case source != "bijotel":
		return fmt.Errorf("source %s, want \"bijotel\"", Quote(source))
	case b.LegacyRows < 1 || b.LegacyFirstSeq < 1:
		return fmt.Errorf("legacy rows %d from seq %d, want at least one from seq 1 on", b.LegacyRows, b.LegacyFirstSeq)
	case b.LegacyLastSeq != b.LegacyFirstSeq+b.LegacyRows-1:
		return fmt.Errorf("legacy seqs %d..%d do not hold %d rows", b.LegacyFirstSeq, b.LegacyLastSeq, b.LegacyRows)
	case b.FirstSeq != seq+1 || b.LastSeq != b.FirstSeq+b.LegacyRows-1:
		return fmt.Errorf("imported seqs %d..%d, want %d..%d", b.FirstSeq, b.LastSeq, seq+1, seq+b.LegacyRows)
	case !isHex(b.LegacyFirstPrevHash, 64) || !isHex(b.LegacyHeadHMACHash, 64) ||
		!isHex(b.LegacyExportSHA256, 64) || !isHex(b.LegacyRowsSHA256, 64):
		return fmt.Errorf("legacy hashes must be 64 lowercase hex characters")
	}
	if _, err := time.Parse(time.RFC3339Nano, b.LegacyExportCreatedAt); err != nil {
		return fmt.Errorf("legacy_export_created_at: %w", err)
	}
	return nil
}

// LegacySeq is the legacy seq of the imported entry at seq.
func (b *Bridge) LegacySeq(seq int64) int64 { return b.LegacyFirstSeq + seq - b.FirstSeq }

// Holds reports whether seq is one of the imported entries.
func (b *Bridge) Holds(seq int64) bool { return seq >= b.FirstSeq && seq <= b.LastSeq }

// ImportDigest computes a bridge's LegacyRowsSHA256: SHA-256 over one line per imported
// entry, in order, each the RFC 8785 JSON of {canonical_hash, seq (the legacy seq, a
// number), span_id, span_kind, span_name, timestamp_ns (a decimal string), trace_id}
// followed by a newline. The zero value is not usable: call NewImportDigest.
type ImportDigest struct {
	h    hash.Hash
	line []byte
}

// NewImportDigest returns an empty digest.
func NewImportDigest() *ImportDigest { return &ImportDigest{h: sha256.New()} }

// Add adds the imported entry e, whose legacy seq is legacySeq.
func (d *ImportDigest) Add(legacySeq int64, e *Entry) {
	d.line = append(d.line[:0], `{"canonical_hash":"`...)
	d.line = append(d.line, e.CanonicalHash...)
	d.line = append(d.line, `","seq":`...)
	d.line = strconv.AppendInt(d.line, legacySeq, 10)
	for _, m := range [...]struct{ name, value string }{
		{"span_id", e.SpanID}, {"span_kind", e.SpanKind}, {"span_name", e.SpanName},
		{"timestamp_ns", e.TimestampNS}, {"trace_id", e.TraceID},
	} {
		d.line = append(d.line, `,"`+m.name+`":`...)
		d.line = canonical.AppendString(d.line, m.value)
	}
	d.line = append(d.line, "}\n"...)
	d.h.Write(d.line)
}

// Sum is the hex digest of the entries added so far.
func (d *ImportDigest) Sum() string { return hex.EncodeToString(d.h.Sum(nil)) }
