// Package sigstorebundle restates the log leg of a Cairn receipt as a Sigstore bundle
// (media type application/vnd.dev.sigstore.bundle.v0.3+json), and the logs and timestamp
// authorities that vouch for it as a Sigstore trusted root, so that tools Cairn did not
// write (sigstore-go, cosign verify-blob) verify it with the federation's key.
//
// The bundle's message signature is the federation's Ed25519ph signature over the
// SHA-512 digest of the logged content (for a cross-anchor, the 32 raw bytes of its
// cross_anchor_hash: protocol.CrossAnchorLogContent); its verification material is the
// log entry with its inclusion proof and checkpoint, and the RFC 3161 timestamps over the
// signature a Rekor v2 entry carries. It says nothing of the participants: that the
// hash covers their chain signatures is Cairn's own check (cairn federation verify).
package sigstorebundle

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// BundleMediaType is the media type of the bundles New makes.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Bundle is a Sigstore bundle of a message signature by a public key, in the protobuf
// JSON form Sigstore's tools read (int64 as strings, bytes as standard base64).
type Bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial VerificationMaterial `json:"verificationMaterial"`
	MessageSignature     MessageSignature     `json:"messageSignature"`
}

// VerificationMaterial is what a verifier checks the signature's log entry and time with.
type VerificationMaterial struct {
	PublicKey                 PublicKeyIdentifier        `json:"publicKey"`
	TlogEntries               []TlogEntry                `json:"tlogEntries"`
	TimestampVerificationData *TimestampVerificationData `json:"timestampVerificationData,omitempty"`
}

// PublicKeyIdentifier names the signing key; the verifier is given the key itself.
type PublicKeyIdentifier struct {
	Hint string `json:"hint"`
}

// TlogEntry is a transparency log entry with its proofs (Sigstore's TransparencyLogEntry).
type TlogEntry struct {
	LogIndex          string            `json:"logIndex"`
	LogID             KeyID             `json:"logId"`
	KindVersion       KindVersion       `json:"kindVersion"`
	IntegratedTime    string            `json:"integratedTime"`
	InclusionPromise  *InclusionPromise `json:"inclusionPromise,omitempty"`
	InclusionProof    InclusionProof    `json:"inclusionProof"`
	CanonicalizedBody string            `json:"canonicalizedBody"`
}

// KeyID is a log's identifier, standard base64.
type KeyID struct {
	KeyID string `json:"keyId"`
}

// KindVersion is the entry's type.
type KindVersion struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// InclusionPromise is a Rekor v1 signed entry timestamp.
type InclusionPromise struct {
	SignedEntryTimestamp string `json:"signedEntryTimestamp"`
}

// InclusionProof is an RFC 6962 inclusion proof and the checkpoint it leads to.
type InclusionProof struct {
	LogIndex   string     `json:"logIndex"`
	RootHash   string     `json:"rootHash"`
	TreeSize   string     `json:"treeSize"`
	Hashes     []string   `json:"hashes"`
	Checkpoint Checkpoint `json:"checkpoint"`
}

// Checkpoint is a signed note.
type Checkpoint struct {
	Envelope string `json:"envelope"`
}

// TimestampVerificationData holds RFC 3161 timestamps over the signature.
type TimestampVerificationData struct {
	RFC3161Timestamps []SignedTimestamp `json:"rfc3161Timestamps"`
}

// SignedTimestamp is a DER TimeStampResp, standard base64.
type SignedTimestamp struct {
	SignedTimestamp string `json:"signedTimestamp"`
}

// MessageSignature is a signature over a message's digest.
type MessageSignature struct {
	MessageDigest MessageDigest `json:"messageDigest"`
	Signature     string        `json:"signature"`
}

// MessageDigest is a message's digest and its algorithm.
type MessageDigest struct {
	Algorithm string `json:"algorithm"`
	Digest    string `json:"digest"`
}

// New restates b, a log proof bundle that verifies under logKey (the caller has checked
// it: see protocol.VerifyLogBundle), as a Sigstore bundle whose message signature is the
// logged one. hint names the signing key (Cairn uses the federation key's fingerprint).
func New(b *protocol.LogBundle, logKey crypto.PublicKey, hint string) (*Bundle, error) {
	body, err := base64.StdEncoding.DecodeString(b.Body)
	if err != nil {
		return nil, fmt.Errorf("log bundle body: %w", err)
	}
	h, err := protocol.ParseHashedRekord(body)
	if err != nil {
		return nil, err
	}
	p := b.Verification.InclusionProof
	logID, err := bundleLogID(b, logKey)
	if err != nil {
		return nil, err
	}
	b64 := base64.StdEncoding.EncodeToString
	root, err := hex.DecodeString(p.RootHash)
	if err != nil {
		return nil, fmt.Errorf("log bundle root hash: %w", err)
	}
	hashes := make([]string, len(p.Hashes))
	for i, s := range p.Hashes {
		raw, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("log bundle proof hash %d: %w", i, err)
		}
		hashes[i] = b64(raw)
	}
	entry := TlogEntry{
		LogIndex:       strconv.FormatInt(b.LogIndex, 10),
		LogID:          KeyID{KeyID: b64(logID)},
		KindVersion:    KindVersion{Kind: "hashedrekord", Version: h.APIVersion},
		IntegratedTime: strconv.FormatInt(b.IntegratedTime, 10),
		InclusionProof: InclusionProof{LogIndex: strconv.FormatInt(p.LogIndex, 10), RootHash: b64(root),
			TreeSize: strconv.FormatInt(p.TreeSize, 10), Hashes: hashes, Checkpoint: Checkpoint{Envelope: p.Checkpoint}},
		CanonicalizedBody: b.Body,
	}
	if set := b.Verification.SignedEntryTimestamp; set != "" {
		entry.InclusionPromise = &InclusionPromise{SignedEntryTimestamp: set}
	}
	out := &Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: VerificationMaterial{PublicKey: PublicKeyIdentifier{Hint: hint},
			TlogEntries: []TlogEntry{entry}},
		MessageSignature: MessageSignature{MessageDigest: MessageDigest{Algorithm: "SHA2_512", Digest: b64(h.Digest)},
			Signature: b64(h.Signature)},
	}
	if ts := b.Verification.RFC3161Timestamps; len(ts) > 0 {
		d := &TimestampVerificationData{}
		for _, t := range ts {
			d.RFC3161Timestamps = append(d.RFC3161Timestamps, SignedTimestamp{SignedTimestamp: t})
		}
		out.VerificationMaterial.TimestampVerificationData = d
	}
	return out, nil
}

// Marshal returns the bundle's JSON.
func (b *Bundle) Marshal() ([]byte, error) { return json.MarshalIndent(b, "", "  ") }

// bundleLogID is the log's ID as Sigstore's trusted root names it: for a Rekor v2 entry
// the C2SP signed-note key ID of the checkpoint's signer (SHA-256 of the origin, a
// newline, the signature type 0x01 and the Ed25519 key; the PKIX DER key's SHA-256 for
// ECDSA), else the SHA-256 of the log's PKIX DER key, the bundle's logID.
func bundleLogID(b *protocol.LogBundle, logKey crypto.PublicKey) ([]byte, error) {
	body, _ := base64.StdEncoding.DecodeString(b.Body)
	if !protocol.IsRekorV2Body(body) {
		return hex.DecodeString(b.LogID)
	}
	switch k := logKey.(type) {
	case ed25519.PublicKey:
		origin, _, ok := strings.Cut(b.Verification.InclusionProof.Checkpoint, "\n")
		if !ok || origin == "" {
			return nil, errors.New("log bundle checkpoint has no origin line")
		}
		return CheckpointKeyID(origin, k), nil
	case *ecdsa.PublicKey:
		return hex.DecodeString(b.LogID)
	}
	return nil, fmt.Errorf("log key is %T, want Ed25519 or ECDSA", logKey)
}

// CheckpointKeyID is the C2SP signed-note key ID of an Ed25519 key named name:
// SHA-256(name || 0x0A || 0x01 || key), untruncated.
func CheckpointKeyID(name string, key ed25519.PublicKey) []byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', 0x01})
	h.Write(key)
	return h.Sum(nil)
}
