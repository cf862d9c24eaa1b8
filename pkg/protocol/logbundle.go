package protocol

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// ErrNotIncluded means a transparency log's proof bundle does not prove that the log
// included its entry: the inclusion proof, the checkpoint or the signed entry timestamp
// does not verify against the log's key.
var ErrNotIncluded = errors.New("log inclusion not proven")

// LogBundle is a transparency log's self-verifying record of one entry: the entry body,
// where the log put it, and the proofs that it did. Its JSON is Rekor v1's LogEntry value
// (the object under the entry's UUID) plus the UUID, so Rekor's own tools read it, and
// Cairn's embedded log writes the same shape.
type LogBundle struct {
	// UUID is the log's name for the entry: the hex RFC 6962 leaf hash of Body, after a
	// 16-hex-digit tree ID on a sharded Rekor.
	UUID string `json:"uuid"`
	// Body is the entry body (a hashedrekord, see NewHashedRekord) in standard base64.
	Body string `json:"body"`
	// IntegratedTime is when the log integrated the entry, in Unix seconds. The signed
	// entry timestamp covers it.
	IntegratedTime int64 `json:"integratedTime"`
	// LogID is the hex SHA-256 of the log's public key in PKIX DER form.
	LogID string `json:"logID"`
	// LogIndex is the entry's index in the log (on a sharded Rekor, across all shards):
	// the index a receipt's tlog_log_index states. The signed entry timestamp covers it.
	LogIndex int64 `json:"logIndex"`
	// Verification holds the proofs.
	Verification LogVerification `json:"verification"`
}

// LogVerification is the proof part of a LogBundle.
type LogVerification struct {
	// InclusionProof proves the entry is in the tree of a signed checkpoint.
	InclusionProof InclusionProof `json:"inclusionProof"`
	// SignedEntryTimestamp is the log's signature (standard base64) over the RFC 8785 JSON
	// of body, integratedTime, logID and logIndex (see EntryTimestampPayload). Both Rekor
	// and the embedded log give one; VerifyLogBundle requires it.
	SignedEntryTimestamp string `json:"signedEntryTimestamp,omitempty"`
	// RFC3161Timestamps are timestamp authorities' answers (DER TimeStampResp, standard
	// base64) over the entry's signature: the time of an entry in a Rekor v2 log, which
	// signs no entry timestamps. VerifyLogBundle checks them when
	// LogVerifyOptions.TimestampAuthorities is set.
	RFC3161Timestamps []string `json:"rfc3161Timestamps,omitempty"`
}

// InclusionProof is an RFC 6962 inclusion proof and the checkpoint it leads to.
type InclusionProof struct {
	// LogIndex is the leaf's index in the tree the proof is for (on a sharded Rekor, the
	// index within the shard).
	LogIndex int64 `json:"logIndex"`
	// RootHash is the hex root of that tree.
	RootHash string `json:"rootHash"`
	// TreeSize is the tree's size.
	TreeSize int64 `json:"treeSize"`
	// Hashes are the hex proof hashes, leaf to root.
	Hashes []string `json:"hashes"`
	// Checkpoint is the signed note committing the log to RootHash at TreeSize.
	Checkpoint string `json:"checkpoint"`
}

// LogVerifyOptions says what VerifyLogBundle trusts and requires.
type LogVerifyOptions struct {
	// Key is the log's public key: *ecdsa.PublicKey or ed25519.PublicKey.
	Key crypto.PublicKey
	// AllowMissingSET accepts a bundle without a signed entry timestamp, leaving its
	// integratedTime and top-level logIndex unauthenticated. Only for the bundles of
	// legacy receipts, made before the embedded log signed entry timestamps; the caller
	// must then not rely on integratedTime and must bind logIndex some other way.
	AllowMissingSET bool
	// TimestampAuthorities, when not nil, are the certificate chains (leaf first, root
	// last) of the timestamp authorities trusted for the bundle's RFC3161Timestamps: at
	// least one timestamp must verify under one of them, over the entry's signature.
	TimestampAuthorities [][]*x509.Certificate
}

// VerifyLogBundle checks offline that the log holding opts.Key included b's entry, and
// returns the entry body. In order:
//
//   - shape: canonical base64 body, 64-hex hashes, 0 <= index < size, a uuid of 64
//     lowercase hex or 80 (a 16-hex tree ID first). Else ErrMalformed.
//   - logID is the SHA-256 of opts.Key, and the UUID ends with the body's leaf hash. Else
//     a *MismatchError.
//   - the inclusion proof leads from the body's leaf hash to rootHash. Else ErrNotIncluded.
//   - the checkpoint is signed by opts.Key (in Rekor's note form or the C2SP signed-note
//     form) and states treeSize and rootHash. Else ErrNotIncluded.
//   - the signed entry timestamp is opts.Key's signature over EntryTimestampPayload(b).
//     Else ErrNotIncluded; a missing one too, unless opts.AllowMissingSET.
//
// The caller MUST still check that the body logs what it expects (VerifyHashedRekord).
func VerifyLogBundle(b *LogBundle, opts LogVerifyOptions) ([]byte, error) {
	logID, err := LogID(opts.Key)
	if err != nil {
		return nil, err
	}
	body, err := decodeCanonicalBase64("body", b.Body, -1)
	if err != nil {
		return nil, err
	}
	p := &b.Verification.InclusionProof
	root, hashes, err := decodeProof(p)
	if err != nil {
		return nil, err
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	if b.LogID != logID {
		return nil, &MismatchError{Field: "logID", Want: logID, Got: b.LogID}
	}
	if !isHex(b.UUID, 64) && !isHex(b.UUID, 80) {
		return nil, fmt.Errorf("%w: uuid is neither 64 nor 80 lowercase hex characters", ErrMalformed)
	}
	if want := hex.EncodeToString(leaf); !strings.HasSuffix(b.UUID, want) {
		return nil, &MismatchError{Field: "uuid", Want: "[tree ID]" + want, Got: b.UUID}
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(p.LogIndex), uint64(p.TreeSize), leaf, hashes, root); err != nil {
		return nil, fmt.Errorf("%w: inclusion proof: %w", ErrNotIncluded, err)
	}
	cp, err := OpenCheckpoint([]byte(p.Checkpoint), opts.Key)
	if err != nil {
		return nil, err
	}
	if cp.Size != uint64(p.TreeSize) || !bytes.Equal(cp.Root, root) {
		return nil, fmt.Errorf("%w: checkpoint is for size %d root %x, the proof for size %d root %x",
			ErrNotIncluded, cp.Size, cp.Root, p.TreeSize, root)
	}
	switch {
	case b.Verification.SignedEntryTimestamp != "":
		if err := verifySET(b, opts.Key); err != nil {
			return nil, err
		}
	case IsRekorV2Body(body):
		// Rekor v2 signs no entry timestamps: the proof binds the index, and the log
		// states no time (the timestamps below do).
		if b.IntegratedTime != 0 || b.LogIndex != p.LogIndex || len(b.UUID) != 64 {
			return nil, fmt.Errorf("%w: a Rekor v2 entry states integratedTime 0, one logIndex and a 64-hex uuid", ErrMalformed)
		}
	case !opts.AllowMissingSET:
		return nil, fmt.Errorf("%w: no signed entry timestamp", ErrNotIncluded)
	}
	if opts.TimestampAuthorities != nil {
		if _, err := verifyBundleTimestamps(b, body, opts.TimestampAuthorities); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// LogID is a transparency log's ID: the hex SHA-256 of its public key in PKIX DER form,
// as Rekor states it in every entry.
func LogID(key crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return "", fmt.Errorf("log key: %w", err)
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:]), nil
}

// decodeProof checks an inclusion proof's shape and decodes its hashes.
func decodeProof(p *InclusionProof) (root []byte, hashes [][]byte, err error) {
	if p.TreeSize < 1 || p.LogIndex < 0 || p.LogIndex >= p.TreeSize {
		return nil, nil, fmt.Errorf("%w: inclusion proof index %d is outside a tree of size %d", ErrMalformed, p.LogIndex, p.TreeSize)
	}
	if root, err = decodeHash("rootHash", p.RootHash); err != nil {
		return nil, nil, err
	}
	hashes = make([][]byte, len(p.Hashes))
	for i, h := range p.Hashes {
		if hashes[i], err = decodeHash(fmt.Sprintf("hashes[%d]", i), h); err != nil {
			return nil, nil, err
		}
	}
	return root, hashes, nil
}

// decodeHash decodes a 64-hex SHA-256 hash.
func decodeHash(field, s string) ([]byte, error) {
	if !isHex(s, 64) {
		return nil, fmt.Errorf("%w: %s is not 64 lowercase hex characters", ErrMalformed, field)
	}
	return hex.DecodeString(s)
}

// setPayload is what a signed entry timestamp signs, in RFC 8785 form.
type setPayload struct {
	Body           string `json:"body"`
	IntegratedTime int64  `json:"integratedTime"`
	LogID          string `json:"logID"`
	LogIndex       int64  `json:"logIndex"`
}

// EntryTimestampPayload returns what a log's signed entry timestamp signs for b: the
// RFC 8785 JSON of {"body", "integratedTime", "logID", "logIndex"} with b's values, as
// Rekor signs it. The embedded log signs the same bytes (pure Ed25519).
func EntryTimestampPayload(b *LogBundle) ([]byte, error) {
	return canonical.Marshal(setPayload{b.Body, b.IntegratedTime, b.LogID, b.LogIndex})
}

// verifySET checks b's signed entry timestamp against key.
func verifySET(b *LogBundle, key crypto.PublicKey) error {
	sig, err := base64.StdEncoding.Strict().DecodeString(b.Verification.SignedEntryTimestamp)
	if err != nil || base64.StdEncoding.EncodeToString(sig) != b.Verification.SignedEntryTimestamp {
		return fmt.Errorf("%w: signedEntryTimestamp is not canonical base64", ErrMalformed)
	}
	payload, err := EntryTimestampPayload(b)
	if err != nil {
		return err
	}
	if !verifyLogSignature(key, payload, sig) {
		return fmt.Errorf("%w: signed entry timestamp does not verify", ErrNotIncluded)
	}
	return nil
}

// verifyLogSignature verifies a log's signature over msg: ECDSA over its SHA-256 (ASN.1),
// or pure Ed25519.
func verifyLogSignature(key crypto.PublicKey, msg, sig []byte) bool {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		digest := sha256.Sum256(msg)
		return ecdsa.VerifyASN1(k, digest[:], sig)
	case ed25519.PublicKey:
		return ed25519.Verify(k, msg, sig)
	}
	return false
}

// ParseLogPublicKeyPEM parses a transparency log's public key: a PKIX "PUBLIC KEY" PEM
// block holding an ECDSA or Ed25519 key, as Rekor's /api/v1/log/publicKey serves it, in
// the exact form ParsePublicKeyPEM requires. An Ed25519 key of small order is refused, as
// ParsePublicKeyPEM refuses it.
func ParseLogPublicKeyPEM(text []byte) (crypto.PublicKey, error) {
	block, err := decodeExactPEM(text, pemPublicKey)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: log public key: %w", ErrMalformed, err)
	}
	switch k := key.(type) {
	case ed25519.PublicKey:
		if err := checkKeyOrder(k); err != nil {
			return nil, fmt.Errorf("log public key: %w", err)
		}
		return key, nil
	case *ecdsa.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("%w: log public key is a %T, want ECDSA or Ed25519", ErrMalformed, key)
}
