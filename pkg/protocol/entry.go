package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// GenesisPrevHash is the prev_hash of a chain's first entry: 64 zeros.
const GenesisPrevHash = "0000000000000000000000000000000000000000000000000000000000000000"

// MinSecretBytes is the shortest chain secret accepted.
const MinSecretBytes = 16

// SpanBody is what an entry seals: one model call as a span. Its canonical form is the
// RFC 8785 JSON of these fields, with both times as decimal strings.
type SpanBody struct {
	Name              string         `json:"name"`
	Kind              string         `json:"kind"`
	Attributes        map[string]any `json:"attributes"`
	StatusCode        string         `json:"status_code"`
	StatusDescription string         `json:"status_description"`
	StartTimeNS       int64          `json:"start_time_ns,string"`
	EndTimeNS         int64          `json:"end_time_ns,string"`
	TraceID           string         `json:"trace_id"`
	SpanID            string         `json:"span_id"`
}

// Canonical returns the body's canonical bytes (RFC 8785). A nil Attributes map is
// written as {}. Attributes that have no canonical form, or nest values deeper than
// MaxBodyNesting, are an error wrapping ErrMalformed.
func (b SpanBody) Canonical() ([]byte, error) {
	out, direct, err := b.appendCanonical(make([]byte, 0, 1024))
	if !direct {
		out, err = b.canonicalViaMap()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: span body: %w", ErrMalformed, err)
	}
	// Canonical JSON nests deeper than a chain entry may (MaxBodyNesting). A body with
	// more brackets than that could be too deep, and is read as CheckEntry reads it.
	if bytes.Count(out, []byte{'['})+bytes.Count(out, []byte{'{'}) > MaxBodyNesting {
		if _, err := readBodyColumns(out); err != nil {
			return nil, fmt.Errorf("%w: span body: %w", ErrMalformed, err)
		}
	}
	return out, nil
}

// appendCanonical appends the body's canonical form, its members written in their
// canonical order, as canonical.Marshal writes them within canonicalViaMap's map (at
// depth 1). It reports false when the attributes hold a value canonical.AppendDirect does
// not write; TestCanonicalMatchesViaMap compares the two.
func (b *SpanBody) appendCanonical(out []byte) (_ []byte, direct bool, err error) {
	out = append(out, `{"attributes":`...)
	if b.Attributes == nil {
		out = append(out, "{}"...)
	} else if out, direct, err = canonical.AppendDirect(out, b.Attributes, 1); !direct || err != nil {
		return nil, direct, err
	}
	for _, m := range [...]struct {
		key  string
		text string
	}{
		{`,"end_time_ns":`, strconv.FormatInt(b.EndTimeNS, 10)},
		{`,"kind":`, b.Kind},
		{`,"name":`, b.Name},
		{`,"span_id":`, b.SpanID},
		{`,"start_time_ns":`, strconv.FormatInt(b.StartTimeNS, 10)},
		{`,"status_code":`, b.StatusCode},
		{`,"status_description":`, b.StatusDescription},
		{`,"trace_id":`, b.TraceID},
	} {
		out = append(out, m.key...)
		if out, _, err = canonical.AppendDirect(out, m.text, 1); err != nil { // a string is always direct
			return nil, true, err
		}
	}
	return append(out, '}'), true, nil
}

// canonicalViaMap is Canonical the general way: the same members as the struct's JSON, as
// a map canonical.Marshal writes.
func (b *SpanBody) canonicalViaMap() ([]byte, error) {
	attrs := b.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
	return canonical.Marshal(map[string]any{
		"name":               b.Name,
		"kind":               b.Kind,
		"attributes":         attrs,
		"status_code":        b.StatusCode,
		"status_description": b.StatusDescription,
		"start_time_ns":      strconv.FormatInt(b.StartTimeNS, 10),
		"end_time_ns":        strconv.FormatInt(b.EndTimeNS, 10),
		"trace_id":           b.TraceID,
		"span_id":            b.SpanID,
	})
}

// Entry is one chain row as it is exported: its columns, its canonical body, and the
// hashes that bind it into the chain.
type Entry struct {
	Seq           int64
	TimestampNS   string // decimal nanoseconds since the Unix epoch: the body's start_time_ns
	TraceID       string // 32 lowercase hex
	SpanID        string // 16 lowercase hex
	SpanName      string
	SpanKind      string
	CanonicalBody []byte // RFC 8785 JSON of a SpanBody; base64 in the export
	CanonicalHash string // hex SHA-256 of CanonicalBody
	PrevHash      string // the previous entry's HMACHash, GenesisPrevHash for seq 1
	HMACHash      string // hex HMAC-SHA256(secret, PrevHash ‖ CanonicalHash)
}

// NewEntry seals body as entry seq after prevHash: it computes the canonical body, its
// hash and the entry's HMAC. The secret must be at least MinSecretBytes long. To seal
// many entries, use one EntrySealer.
func NewEntry(secret []byte, seq int64, prevHash string, body SpanBody) (*Entry, error) {
	s, err := NewEntrySealer(secret)
	if err != nil {
		return nil, err
	}
	return s.Seal(seq, prevHash, body)
}

// An EntrySealer seals entries with one HMAC state keyed with the chain secret, so that
// sealing many entries sets up the key once. It is not safe for concurrent use: give each
// goroutine its own.
type EntrySealer struct {
	mac hash.Hash
}

// NewEntrySealer returns an EntrySealer for secret, which must be at least
// MinSecretBytes long.
func NewEntrySealer(secret []byte) (*EntrySealer, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: chain secret is %d bytes, want at least %d", ErrMalformed, len(secret), MinSecretBytes)
	}
	return &EntrySealer{mac: hmac.New(sha256.New, secret)}, nil
}

// Seal is NewEntry with the sealer's secret.
func (s *EntrySealer) Seal(seq int64, prevHash string, body SpanBody) (*Entry, error) {
	if seq < 1 {
		return nil, fmt.Errorf("%w: seq %d, want at least 1", ErrMalformed, seq)
	}
	if !isHex(prevHash, 64) {
		return nil, fmt.Errorf("%w: prev_hash must be 64 lowercase hex characters", ErrMalformed)
	}
	e, err := unlinkedEntry(&body)
	if err != nil {
		return nil, err
	}
	s.Link(e, seq, prevHash)
	return e, nil
}

// NewUnlinkedEntry builds the entry that seals body, without its place in the chain: its
// columns, canonical body and canonical_hash, but no Seq, PrevHash or HMACHash, which
// EntrySealer.Link sets. It refuses, with an error wrapping ErrMalformed, a body whose
// entry CheckEntry would refuse for its shape: trace_id not 32 or span_id not 16
// lowercase hex characters, a negative start time, a name or kind that is not valid
// UTF-8, or attributes with no canonical form or nested deeper than MaxBodyNesting.
//
// Once linked, the entry passes CheckEntry by construction, so a sealer need not check it
// again: the body is canonical.Marshal's output, which is RFC 8785 JSON (the canonical
// package's tests hold its direct writer to Transform), checked for nesting as CheckEntry
// checks it (see Canonical); its hash is computed here from those bytes; and the columns
// are copied from the same fields the body's members are written from, which write back
// unchanged because they are checked to be valid UTF-8 (canonical.Marshal would replace
// bytes that are not) and, for the ids and time, plain ASCII. A test seals generated and
// edge-case bodies this way and checks every entry with CheckEntry.
func NewUnlinkedEntry(body *SpanBody) (*Entry, error) {
	e, err := unlinkedEntry(body)
	if err != nil {
		return nil, err
	}
	err = e.checkIDs()
	if err == nil {
		err = e.checkText()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return e, nil
}

// unlinkedEntry computes the canonical body of body, its hash and the entry's columns.
func unlinkedEntry(body *SpanBody) (*Entry, error) {
	raw, err := body.Canonical()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	return &Entry{
		TimestampNS:   strconv.FormatInt(body.StartTimeNS, 10),
		TraceID:       body.TraceID,
		SpanID:        body.SpanID,
		SpanName:      body.Name,
		SpanKind:      body.Kind,
		CanonicalBody: raw,
		CanonicalHash: hex.EncodeToString(sum[:]),
	}, nil
}

// Link places e, sealed elsewhere in the chain or not at all, as entry seq after
// prevHash: it sets Seq and PrevHash and computes the HMAC that binds them.
func (s *EntrySealer) Link(e *Entry, seq int64, prevHash string) {
	e.Seq, e.PrevHash = seq, prevHash
	e.HMACHash = entryHMAC(s.mac, prevHash, e.CanonicalHash)
}

// EntryHMAC is hex(HMAC-SHA256(secret, ASCII(prevHash ‖ canonicalHash))).
func EntryHMAC(secret []byte, prevHash, canonicalHash string) string {
	m := hmac.New(sha256.New, secret)
	return entryHMAC(m, prevHash, canonicalHash)
}

// entryHMAC computes EntryHMAC with a reusable HMAC state keyed with the secret.
func entryHMAC(m hash.Hash, prevHash, canonicalHash string) string {
	m.Reset()
	var in [128]byte
	n := copy(in[:], prevHash)
	n += copy(in[n:], canonicalHash)
	m.Write(in[:n])
	var out [sha256.Size]byte
	return hex.EncodeToString(m.Sum(out[:0]))
}

// ChainSignature is hex(HMAC-SHA256(secret, "chain:" ‖ lastHMACHash ‖ ":" ‖ decimal
// entryCount)): the secret holder's statement that the chain had entryCount entries ending
// in lastHMACHash.
func ChainSignature(secret []byte, lastHMACHash string, entryCount int64) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("chain:" + lastHMACHash + ":" + strconv.FormatInt(entryCount, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// checkShape reports the first column of e that is not of its format.
func (e *Entry) checkShape() error {
	if e.Seq < 1 {
		return fmt.Errorf("seq %d, want at least 1", e.Seq)
	}
	if err := e.checkIDs(); err != nil {
		return err
	}
	switch {
	case !isHex(e.CanonicalHash, 64):
		return fmt.Errorf("canonical_hash must be 64 lowercase hex characters")
	case !isHex(e.PrevHash, 64):
		return fmt.Errorf("prev_hash must be 64 lowercase hex characters")
	case !isHex(e.HMACHash, 64):
		return fmt.Errorf("hmac_hash must be 64 lowercase hex characters")
	}
	return e.checkText()
}

// checkIDs reports the first of timestamp_ns, trace_id and span_id that is not of its
// format.
func (e *Entry) checkIDs() error {
	switch {
	case !isDecimal(e.TimestampNS):
		return fmt.Errorf("timestamp_ns %s is not a decimal integer", Quote(e.TimestampNS))
	case !isHex(e.TraceID, 32):
		return fmt.Errorf("trace_id must be 32 lowercase hex characters")
	case !isHex(e.SpanID, 16):
		return fmt.Errorf("span_id must be 16 lowercase hex characters")
	}
	return nil
}

// checkText reports span_name or span_kind that is not valid UTF-8.
func (e *Entry) checkText() error {
	if !utf8.ValidString(e.SpanName) || !utf8.ValidString(e.SpanKind) {
		return fmt.Errorf("span_name and span_kind must be valid UTF-8")
	}
	return nil
}

// appendLeaf appends the Merkle leaf of e: the RFC 8785 JSON of the entry without its body.
// Members are written in their canonical order.
func appendLeaf(b []byte, e *Entry) []byte {
	b = append(b, '{')
	return appendLeafMembers(b, e)
}

// appendEntryJSON appends the entry as it appears in an export: its leaf with
// canonical_body_b64 added (which sorts first), so the line is itself canonical.
func appendEntryJSON(b []byte, e *Entry) []byte {
	b = append(b, `{"canonical_body_b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, e.CanonicalBody)
	b = append(b, `",`...)
	return appendLeafMembers(b, e)
}

func appendLeafMembers(b []byte, e *Entry) []byte {
	b = append(b, `"canonical_hash":"`...)
	b = append(b, e.CanonicalHash...)
	b = append(b, `","hmac_hash":"`...)
	b = append(b, e.HMACHash...)
	b = append(b, `","prev_hash":"`...)
	b = append(b, e.PrevHash...)
	b = append(b, `","seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"span_id":"`...)
	b = append(b, e.SpanID...)
	b = append(b, `","span_kind":`...)
	b = canonical.AppendString(b, e.SpanKind)
	b = append(b, `,"span_name":`...)
	b = canonical.AppendString(b, e.SpanName)
	b = append(b, `,"timestamp_ns":"`...)
	b = append(b, e.TimestampNS...)
	b = append(b, `","trace_id":"`...)
	b = append(b, e.TraceID...)
	return append(b, `"}`...)
}
