package bijotel

import (
	"crypto/sha256"
	"encoding/hex"
)

// The original's export formats (LEGACY-BIJOTEL.md §2.1). Both carry version "1.0"; v2
// may carry an Ed25519 signature over chain_signature.
const (
	FormatV1      = "bijotel-chain-v1"
	FormatV2      = "bijotel-chain-v2"
	FormatVersion = "1.0"
	// SignedOver is the only signed_over an ed25519_signature block names.
	SignedOver = "chain_signature"
	// SignatureAlgorithm is the only algorithm an ed25519_signature block names.
	SignatureAlgorithm = "Ed25519"
)

// MaxValueBytes bounds one entry of an export as written, and the header members around
// the entries: a larger one is malformed. Reading an export holds about this much at most,
// however long the export.
const MaxValueBytes = 64 << 20

// Envelope is an export's members other than its entries, as read.
type Envelope struct {
	Version        string
	Format         string // FormatV1 or FormatV2
	CreatedAt      string // Python isoformat; bound by nothing
	EntriesCount   int64  // as stated
	HeadHash       string // as stated
	ChainSignature string // as stated: hex HMAC, see ChainSignature
	Segment        *Segment
	Signature      *Signature // the ed25519_signature block, nil when absent
	// Entries is how many entries the export holds.
	Entries int64
}

// Segment is the segment block of an export made with a range filter (§2.1). Nothing but
// its consistency with the entries checks it; BoundaryPrevHash in particular is trusted
// from the file (§5.1.4).
type Segment struct {
	FirstSeq         int64
	LastSeq          int64
	TotalInSegment   int64
	TotalInFullChain int64 // COUNT(*) of the chain when exported: not checkable
	BoundaryPrevHash string
	IsCompleteChain  bool
}

// Signature is a v2 export's ed25519_signature block, its members as written ("" when
// absent).
type Signature struct {
	PublicKey  string // base64 of the raw 32-byte key
	Signature  string // base64 of the 64-byte signature over the ASCII chain_signature
	SignedOver string
	Algorithm  string
}

// KeyFingerprint is how the original names a public key: the first 16 hex characters of
// the SHA-256 of its raw 32 bytes.
func KeyFingerprint(pub []byte) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}
