package bijotel

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// GenesisHash is the prev_hash of a chain's first row ever: 64 zeros.
const GenesisHash = protocol.GenesisPrevHash

// MinSecretBytes is the shortest secret the original seals with; Cairn verifies with no
// shorter one.
const MinSecretBytes = 16

// Row is one row of the original's chain table, or one entry of its export. Only
// CanonicalBody is bound by the hashes; every other column but seq is metadata the
// original never hashed.
type Row struct {
	Seq              int64
	TimestampNS      int64 // the span's end time, or an event's caller-given time
	TraceID          string
	SpanID           string
	SpanName         string
	SpanKind         *string // nil: NULL
	CanonicalBody    []byte  // RFC 8785 JSON, as sealed
	CanonicalHash    string  // hex SHA-256 of CanonicalBody
	SemanticBodyHash *string // nil: NULL
	PrevHash         string  // the previous row's HMACHash, GenesisHash for the first
	HMACHash         string  // hex HMAC-SHA256(secret, PrevHash ‖ CanonicalHash)
}

// Reasons a chain row fails verification, worded as the original's verify_chain words
// them, in the order it checks.
const (
	ReasonBodyHash = "canonical_hash mismatch (body mutated)"
	ReasonPrevHash = "prev_hash mismatch (chain broken)"
	ReasonHMAC     = "hmac_hash mismatch (secret wrong or hmac mutated)"
)

// RowError is a row that fails verification: its seq and the original's reason.
type RowError struct {
	Seq    int64
	Reason string
}

func (e *RowError) Error() string { return fmt.Sprintf("chain broken at seq=%d: %s", e.Seq, e.Reason) }

// Is makes a RowError match protocol.ErrMismatch: a verification ran and failed.
func (e *RowError) Is(target error) bool { return target == protocol.ErrMismatch }

// ErrSecret is wrapped by errors about the secret itself (too short).
var ErrSecret = errors.New("bijotel: unusable HMAC secret")

// RowHMAC is the hmac_hash the original computes: hex HMAC-SHA256(secret,
// ASCII(prevHash ‖ canonicalHash)). It is Cairn's rule too.
func RowHMAC(secret []byte, prevHash, canonicalHash string) string {
	return protocol.EntryHMAC(secret, prevHash, canonicalHash)
}

// ChainSignature is an export's chain_signature: hex HMAC-SHA256(secret,
// "chain:" ‖ headHash ‖ ":" ‖ decimal entriesCount). It is Cairn's rule too.
func ChainSignature(secret []byte, headHash string, entriesCount int64) string {
	return protocol.ChainSignature(secret, headHash, entriesCount)
}

// BodyHash is hex SHA-256 of a canonical body.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// ChainVerifier checks a chain's rows in seq order by the original's verify_chain rules:
// for each row, the body's SHA-256 against canonical_hash, prev_hash against the previous
// row's hmac_hash (or the expected first prev_hash), then hmac_hash. It keeps no HMAC it
// computed: a failure names the seq and the reason only. Not safe for concurrent use.
type ChainVerifier struct {
	mac     hash.Hash
	prev    string
	checked int64
	last    int64
}

// NewChainVerifier returns a verifier whose first row must link to firstPrev (GenesisHash
// for a chain's first row). secret must be at least MinSecretBytes long.
func NewChainVerifier(secret []byte, firstPrev string) (*ChainVerifier, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: %d bytes, want at least %d", ErrSecret, len(secret), MinSecretBytes)
	}
	return &ChainVerifier{mac: hmac.New(sha256.New, secret), prev: firstPrev}, nil
}

// Check checks r, the next row, and returns a *RowError if it fails.
func (v *ChainVerifier) Check(r *Row) error {
	if BodyHash(r.CanonicalBody) != r.CanonicalHash {
		return &RowError{Seq: r.Seq, Reason: ReasonBodyHash}
	}
	if r.PrevHash != v.prev {
		return &RowError{Seq: r.Seq, Reason: ReasonPrevHash}
	}
	if !v.hmacMatches(r) {
		return &RowError{Seq: r.Seq, Reason: ReasonHMAC}
	}
	v.prev, v.last = r.HMACHash, r.Seq
	v.checked++
	return nil
}

// hmacMatches recomputes r's HMAC and compares it in constant time with hmac_hash,
// which must be 64 lowercase hex digits: the original compares hex strings, so an
// uppercase hmac_hash never matches there either.
func (v *ChainVerifier) hmacMatches(r *Row) bool {
	return macMatches(v.mac, r.PrevHash, r.CanonicalHash, r.HMACHash)
}

// Checked is how many rows passed, and Last the seq of the last of them (0 for none).
func (v *ChainVerifier) Checked() (n, last int64) { return v.checked, v.last }

// Head is the hmac_hash of the last row that passed, or the expected first prev_hash when
// none has.
func (v *ChainVerifier) Head() string { return v.prev }

// CairnEntry sets e to r as a Cairn chain imports it (protocol.Bridge): the same body,
// canonical_hash and columns, a NULL span_kind as "". Seq and the links are left for the
// importing chain to set.
func (r *Row) CairnEntry(e *protocol.Entry) {
	*e = protocol.Entry{
		TimestampNS: strconv.FormatInt(r.TimestampNS, 10), TraceID: r.TraceID, SpanID: r.SpanID,
		SpanName: r.SpanName, CanonicalBody: r.CanonicalBody, CanonicalHash: r.CanonicalHash,
	}
	if r.SpanKind != nil {
		e.SpanKind = *r.SpanKind
	}
}
