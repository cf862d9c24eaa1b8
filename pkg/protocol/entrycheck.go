package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// CheckEntry checks everything about one entry that needs no other entry, with the
// checks and reasons VerifyExport uses, in its order: the entry's shape
// (ReasonMalformed), SHA-256 of the body against canonical_hash (ReasonBodyHash), that
// the body is its own RFC 8785 form (ReasonNonCanonical), the columns against the body's
// members (ReasonColumn), and, when mac is not nil, hmac_hash (ReasonHMAC). Failures are
// an *EntryError.
//
// The columns are compared only for a span body. A body with neither a string trace_id
// nor a string span_id member is an imported row's (BodyImported: a BIJOTEL body, which
// has no ids): its columns are the imported row's and are bound by the bridge record
// instead (see Bridge); CheckEntryBody tells the caller which kind it checked.
//
// mac must be HMAC-SHA256 keyed with the chain secret (hmac.New(sha256.New, secret)); it
// is reset before use, so one can serve many calls, but not concurrent ones.
//
// The caller must still check seq and prev_hash against the previous entry; VerifyExport
// does that first, so a changed prev_hash is reported as a broken link rather than as the
// HMAC mismatch it also causes.
func CheckEntry(e *Entry, mac hash.Hash) error {
	_, err := CheckEntryBody(e, mac)
	return err
}

// BodyKind says what an entry's canonical body is.
type BodyKind uint8

const (
	// BodySpan is a span body: its members name, kind, start_time_ns, trace_id and span_id
	// are the entry's columns.
	BodySpan BodyKind = iota
	// BodyImported is a body imported byte for byte from another product's chain, which
	// has neither a string trace_id nor a string span_id member; its columns are bound by
	// the bridge record that precedes the imported rows (see Bridge).
	BodyImported
)

// CheckEntryBody is CheckEntry, and also says what kind of body the entry has (which is
// meaningful only when the error is nil).
func CheckEntryBody(e *Entry, mac hash.Hash) (BodyKind, error) {
	c := EntryChecker{mac: mac}
	return c.Check(e)
}

// An EntryChecker checks entries as CheckEntryBody does, with scratch space of its own
// so that checking an entry that passes allocates nothing: a verifier checking millions
// of entries keeps one per goroutine. It is not safe for concurrent use.
type EntryChecker struct {
	mac    hash.Hash
	in     [2 * 64]byte      // prev_hash ‖ canonical_hash, the HMAC's input
	sum    [sha256.Size]byte // the recomputed HMAC
	values [len(bodyColumnNames)][]byte
}

// NewEntryChecker returns an EntryChecker that checks HMACs with mac (as CheckEntry
// takes it), or none when mac is nil.
func NewEntryChecker(mac hash.Hash) *EntryChecker { return &EntryChecker{mac: mac} }

// Check is CheckEntryBody(e, mac) with c's mac.
func (c *EntryChecker) Check(e *Entry) (BodyKind, error) {
	kind := BodySpan
	fail := func(reason string, err error) (BodyKind, error) {
		return kind, &EntryError{Seq: e.Seq, Reason: reason, Err: err}
	}
	if err := e.checkShape(); err != nil {
		return fail(ReasonMalformed, fmt.Errorf("%w: %w", ErrMalformed, err))
	}
	// canonical_hash is 64 lowercase hex digits (checkShape): compare the bytes it
	// decodes to, and hex-encode the sum only to report a mismatch.
	if sum := sha256.Sum256(e.CanonicalBody); sum != decodeCheckedHash(e.CanonicalHash) {
		return fail(ReasonBodyHash, &MismatchError{Field: "canonical_hash", Want: hex.EncodeToString(sum[:]), Got: e.CanonicalHash})
	}
	// One pass checks the body's canonical form and nesting and collects the members
	// the columns repeat.
	values := c.values[:]
	clear(values)
	defer clear(values) // keep no body alive
	if err := canonical.CheckObject(e.CanonicalBody, MaxBodyNesting+1, bodyColumnNames[:], values); err != nil {
		return fail(ReasonNonCanonical, fmt.Errorf("%w: body is not RFC 8785 JSON nested at most %d levels: %w", ErrMismatch, MaxBodyNesting, err))
	}
	cols := bodyColumns{name: values[0], kind: values[1], startTimeNS: values[2], traceID: values[3], spanID: values[4]}
	if cols.traceID == nil && cols.spanID == nil {
		kind = BodyImported
	} else if err := cols.compare(e); err != nil {
		return fail(ReasonColumn, err)
	}
	if c.mac != nil && !c.hmacMatches(e) {
		// The recomputed HMAC is not kept: it is what a forger needs.
		return fail(ReasonHMAC, &MismatchError{Field: "hmac_hash", Got: e.HMACHash})
	}
	return kind, nil
}

// hmacMatches recomputes e's HMAC with c's mac and compares it, in constant time, with
// hmac_hash, without allocating. e's shape must have been checked.
func (c *EntryChecker) hmacMatches(e *Entry) bool {
	n := copy(c.in[:], e.PrevHash)
	n += copy(c.in[n:], e.CanonicalHash)
	c.mac.Reset()
	c.mac.Write(c.in[:n])
	stated := decodeCheckedHash(e.HMACHash)
	ok := hmac.Equal(c.mac.Sum(c.sum[:0]), stated[:])
	clear(c.sum[:]) // the MAC that would pass is not kept, even in scratch
	return ok
}

// decodeCheckedHash decodes 64 lowercase hex digits, which checkShape has checked s is.
// (hex.Decode's table lookup: a branch on each digit is mispredicted on random hashes.)
func decodeCheckedHash(s string) (h [sha256.Size]byte) {
	_, _ = hex.Decode(h[:], []byte(s)) // the conversion does not escape: no copy on the heap
	return h
}
