package protocol

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them, so callers map them
// to exit codes or HTTP statuses with errors.Is.
var (
	// ErrMalformed means the input is not of the format's shape (bad JSON, wrong hex length,
	// missing field, unknown field). Nothing was verified.
	ErrMalformed = errors.New("malformed input")

	// ErrSignature means an Ed25519 signature did not verify.
	ErrSignature = errors.New("signature does not verify")

	// ErrKeyNotTrusted means a signature verified, but under a key other than the one the
	// caller trusts.
	ErrKeyNotTrusted = errors.New("signed by a key that is not trusted")

	// ErrMismatch means a recomputed value differs from the one stated; the error is also a
	// *MismatchError or *EntryError that says which.
	ErrMismatch = errors.New("mismatch")

	// ErrContinuity means a submission does not start where the previous one ended.
	ErrContinuity = errors.New("continuity violation")

	// ErrEntryCountRegression means a submission's entry_count is below the previous one's.
	ErrEntryCountRegression = errors.New("entry count regression")

	// ErrExpired means a token, challenge or statement is outside its validity window.
	ErrExpired = errors.New("expired")
)

// MismatchError reports a recomputed value that differs from the stated one. It wraps
// ErrMismatch.
//
// Its message names the field and the stated value, never the recomputed one: a verifier
// that echoed the value that would have passed would let whoever can submit input compute
// MACs, hashes and signatures it cannot (the chain service would be an HMAC oracle). A
// stated value longer than MaxQuoted bytes is cut short in the message (see Excerpt).
type MismatchError struct {
	// Field names what was compared, as the format spells it (e.g. "entries_root").
	Field string
	// Want is the value recomputed from the data, for programs; Error does not print it.
	// It is left empty when the value is keyed with a secret (hmac_hash,
	// chain_signature), so that no error value ever holds a MAC that would pass.
	Want string
	// Got is the value the input states.
	Got string
}

func (e *MismatchError) Error() string {
	if e.Got == "" {
		return e.Field + " mismatch"
	}
	return e.Field + " mismatch: stated " + Excerpt(e.Got)
}

// Unwrap makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Unwrap() error { return ErrMismatch }

// EntryError reports the first chain entry that failed a check.
type EntryError struct {
	// Seq is the entry's sequence number.
	Seq int64
	// Reason is one of the Reason* constants.
	Reason string
	// Err is the underlying error (often a *MismatchError).
	Err error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("entry seq %d: %s: %v", e.Seq, e.Reason, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Reasons an entry fails verification.
const (
	// ReasonBodyHash means SHA-256 of the canonical body differs from canonical_hash.
	ReasonBodyHash = "body_hash_mismatch"
	// ReasonLink means prev_hash differs from the previous entry's hmac_hash (or from
	// first_prev_hash for the first exported entry).
	ReasonLink = "broken_link"
	// ReasonHMAC means HMAC-SHA256(secret, prev_hash ‖ canonical_hash) differs from hmac_hash.
	ReasonHMAC = "hmac_mismatch"
	// ReasonSeq means seq does not follow the previous entry's seq by one.
	ReasonSeq = "seq_gap"
	// ReasonColumn means a column (timestamp_ns, trace_id, span_id, span_name, span_kind)
	// differs from the value in the body.
	ReasonColumn = "column_mismatch"
	// ReasonNonCanonical means the body is not its own RFC 8785 form (canonical.Check):
	// whitespace, keys out of order or repeated, an escape or number JCS does not write,
	// invalid UTF-8, or anything else that is not canonical JSON.
	ReasonNonCanonical = "non_canonical_body"
	// ReasonBridge means an imported entry (protocol.BodyImported) is not where a bridge
	// record imports it, or the imported entries' columns are not those the bridge binds.
	ReasonBridge = "bridge_mismatch"
	// ReasonMalformed means the entry is not of the format's shape.
	ReasonMalformed = "malformed_entry"
)

// ErrNoTrustedKey means a receipt or export is consistent with the key it names, but the
// caller gave no key to trust, so nothing binds it to the federation or operator.
var ErrNoTrustedKey = errors.New("no trusted key to check against")
