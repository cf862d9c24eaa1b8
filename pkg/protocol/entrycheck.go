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
	kind := BodySpan
	fail := func(reason string, err error) (BodyKind, error) {
		return kind, &EntryError{Seq: e.Seq, Reason: reason, Err: err}
	}
	if err := e.checkShape(); err != nil {
		return fail(ReasonMalformed, fmt.Errorf("%w: %w", ErrMalformed, err))
	}
	sum := sha256.Sum256(e.CanonicalBody)
	var want [64]byte
	hex.Encode(want[:], sum[:])
	if string(want[:]) != e.CanonicalHash {
		return fail(ReasonBodyHash, &MismatchError{Field: "canonical_hash", Want: string(want[:]), Got: e.CanonicalHash})
	}
	// One pass checks the body's canonical form and nesting and collects the members
	// the columns repeat.
	var cols bodyColumns
	values := [...][]byte{nil, nil, nil, nil, nil}
	if err := canonical.CheckObject(e.CanonicalBody, MaxBodyNesting+1, bodyColumnNames[:], values[:]); err != nil {
		return fail(ReasonNonCanonical, fmt.Errorf("%w: body is not RFC 8785 JSON nested at most %d levels: %w", ErrMismatch, MaxBodyNesting, err))
	}
	cols.name, cols.kind, cols.startTimeNS, cols.traceID, cols.spanID = values[0], values[1], values[2], values[3], values[4]
	if cols.traceID == nil && cols.spanID == nil {
		kind = BodyImported
	} else if err := cols.compare(e); err != nil {
		return fail(ReasonColumn, err)
	}
	if mac != nil && !hmacMatches(mac, e) {
		// The recomputed HMAC is not kept: it is what a forger needs.
		return fail(ReasonHMAC, &MismatchError{Field: "hmac_hash", Got: e.HMACHash})
	}
	return kind, nil
}

// hmacMatches recomputes e's HMAC with mac and compares it, in constant time, with
// hmac_hash, without allocating. e's shape must have been checked.
func hmacMatches(mac hash.Hash, e *Entry) bool {
	var in [128]byte
	n := copy(in[:], e.PrevHash)
	n += copy(in[n:], e.CanonicalHash)
	mac.Reset()
	mac.Write(in[:n])
	var sum, stated [sha256.Size]byte
	if _, err := hex.Decode(stated[:], []byte(e.HMACHash)); err != nil {
		return false
	}
	return hmac.Equal(mac.Sum(sum[:0]), stated[:])
}
