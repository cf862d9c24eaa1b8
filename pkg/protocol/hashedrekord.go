package protocol

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// The hashedrekord entry type and version Cairn writes to the transparency log.
const (
	hashedRekordAPIVersion = "0.0.1"
	hashedRekordKind       = "hashedrekord"
	hashedRekordAlgorithm  = "sha512"
)

// hashedRekordBody is the hashedrekord 0.0.1 entry body.
type hashedRekordBody struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Spec       hashedRekordSpec `json:"spec"`
}

type hashedRekordSpec struct {
	Data      hashedRekordData      `json:"data"`
	Signature hashedRekordSignature `json:"signature"`
}

type hashedRekordData struct {
	Hash hashedRekordHash `json:"hash"`
}

type hashedRekordHash struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
}

type hashedRekordSignature struct {
	Content   string                `json:"content"`
	PublicKey hashedRekordPublicKey `json:"publicKey"`
}

type hashedRekordPublicKey struct {
	Content string `json:"content"`
}

// ed25519ph selects Ed25519ph (RFC 8032) over a SHA-512 digest.
var ed25519ph = &ed25519.Options{Hash: crypto.SHA512}

// NewHashedRekord returns the hashedrekord 0.0.1 body, in RFC 8785 form, that logs content
// under key: spec.data.hash is the hex SHA-512 of content, spec.signature.content the
// base64 Ed25519ph signature over that digest, and spec.signature.publicKey.content the
// base64 of key's public PEM. For a cross-anchor, content is CrossAnchorLogContent of its
// hash; for a statement record (registration, withdrawal, key rotation, genesis), its
// RFC 8785 JSON. A key that is not 64 bytes is an error wrapping ErrMalformed.
func NewHashedRekord(content []byte, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	pemText, err := MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	digest := sha512.Sum512(content)
	sig, err := key.Sign(rand.Reader, digest[:], ed25519ph)
	if err != nil {
		return nil, err
	}
	body := hashedRekordBody{
		APIVersion: hashedRekordAPIVersion,
		Kind:       hashedRekordKind,
		Spec: hashedRekordSpec{
			Data: hashedRekordData{Hash: hashedRekordHash{Algorithm: hashedRekordAlgorithm, Value: hex.EncodeToString(digest[:])}},
			Signature: hashedRekordSignature{
				Content:   base64.StdEncoding.EncodeToString(sig),
				PublicKey: hashedRekordPublicKey{Content: base64.StdEncoding.EncodeToString(pemText)},
			},
		},
	}
	return canonical.Marshal(body)
}

// VerifyHashedRekord checks that body is a hashedrekord entry logging content: the
// 0.0.1 body NewHashedRekord makes, or the 0.0.2 body Rekor v2 records for it
// (HashedRekordV2Request):
//
//   - body is one JSON object (any layout) with exactly the members of its version's
//     format, no duplicates, and that format's fixed values (see ParseHashedRekord). Else
//     ErrMalformed.
//   - the logged digest equals SHA-512(content). Else a *MismatchError with Field
//     "data.hash.value" (0.0.1) or "data.digest" (0.0.2).
//   - the signature is the embedded key's Ed25519ph signature over that digest. Else
//     ErrSignature.
//   - when trusted is not nil, the embedded key equals trusted. Else ErrKeyNotTrusted.
//
// With trusted nil only self-consistency is checked: the caller must bind the embedded key
// some other way. Whether the log included the entry is not checked here.
func VerifyHashedRekord(body, content []byte, trusted ed25519.PublicKey) error {
	h, err := ParseHashedRekord(body)
	if err != nil {
		return err
	}
	digest := sha512.Sum512(content)
	if !bytes.Equal(h.Digest, digest[:]) {
		if h.APIVersion == hashedRekordAPIVersion {
			return &MismatchError{Field: "data.hash.value", Want: hex.EncodeToString(digest[:]), Got: hex.EncodeToString(h.Digest)}
		}
		return &MismatchError{Field: "data.digest", Want: base64.StdEncoding.EncodeToString(digest[:]), Got: base64.StdEncoding.EncodeToString(h.Digest)}
	}
	if err := ed25519.VerifyWithOptions(h.PublicKey, h.Digest, h.Signature, ed25519ph); err != nil {
		return fmt.Errorf("%w: hashedrekord Ed25519ph signature over the content's SHA-512", ErrSignature)
	}
	if trusted != nil && !h.PublicKey.Equal(trusted) {
		return fmt.Errorf("%w: hashedrekord signed by %s, trusted key is %s", ErrKeyNotTrusted, Fingerprint(h.PublicKey), Fingerprint(trusted))
	}
	return nil
}

// HashedRekord is what a hashedrekord body states, in either version Cairn reads.
type HashedRekord struct {
	// APIVersion is "0.0.1" (Rekor v1, the embedded log) or "0.0.2" (Rekor v2).
	APIVersion string
	// Digest is the SHA-512 digest of the logged content (64 bytes).
	Digest []byte
	// Signature is the Ed25519ph signature over Digest (64 bytes).
	Signature []byte
	// PublicKey is the key the body names.
	PublicKey ed25519.PublicKey
}

// ParseHashedRekord decodes a hashedrekord body strictly and checks its shape, but not its
// signature (VerifyHashedRekord does). A 0.0.1 body has apiVersion "0.0.1", kind
// "hashedrekord", algorithm "sha512", a value of 128 lowercase hex, a signature of
// canonical padded base64 of 64 bytes and a public key that is the base64 of an Ed25519
// PEM (see ParsePublicKeyPEM); a 0.0.2 body is the one HashedRekordV2Request describes.
// Anything else is ErrMalformed.
func ParseHashedRekord(body []byte) (*HashedRekord, error) {
	if v, err := hashedRekordVersion(body); err != nil {
		return nil, err
	} else if v == hashedRekordV2APIVersion {
		return decodeHashedRekordV2(body)
	}
	b, err := decodeHashedRekord(body)
	if err != nil {
		return nil, err
	}
	sig, err := decodeCanonicalBase64("signature.content", b.Spec.Signature.Content, ed25519.SignatureSize)
	if err != nil {
		return nil, err
	}
	pemText, err := decodeCanonicalBase64("signature.publicKey.content", b.Spec.Signature.PublicKey.Content, -1)
	if err != nil {
		return nil, err
	}
	pub, err := ParsePublicKeyPEM(pemText)
	if err != nil {
		return nil, fmt.Errorf("signature.publicKey.content: %w", err)
	}
	digest, _ := hex.DecodeString(b.Spec.Data.Hash.Value) // shape checked by decodeHashedRekord
	return &HashedRekord{APIVersion: b.APIVersion, Digest: digest, Signature: sig, PublicKey: pub}, nil
}

// decodeHashedRekord decodes body strictly: exact member names at every level, all present,
// all strings, and the fixed values of the format.
func decodeHashedRekord(body []byte) (*hashedRekordBody, error) {
	// The body carries only strings, so RFC 8785 accepts every well-formed one; this rejects
	// duplicate keys, invalid UTF-8 and trailing data, which encoding/json lets through.
	if _, err := canonical.Transform(body); err != nil {
		return nil, fmt.Errorf("%w: hashedrekord body: %w", ErrMalformed, err)
	}
	var b hashedRekordBody
	var spec, data, hash, sig, key map[string]json.RawMessage
	top, err := rekordObject(body, "", "apiVersion", "kind", "spec")
	if err == nil {
		spec, err = rekordObject(top["spec"], "spec", "data", "signature")
	}
	if err == nil {
		data, err = rekordObject(spec["data"], "spec.data", "hash")
	}
	if err == nil {
		hash, err = rekordObject(data["hash"], "spec.data.hash", "algorithm", "value")
	}
	if err == nil {
		sig, err = rekordObject(spec["signature"], "spec.signature", "content", "publicKey")
	}
	if err == nil {
		key, err = rekordObject(sig["publicKey"], "spec.signature.publicKey", "content")
	}
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{
		{"apiVersion", top["apiVersion"], &b.APIVersion},
		{"kind", top["kind"], &b.Kind},
		{"spec.data.hash.algorithm", hash["algorithm"], &b.Spec.Data.Hash.Algorithm},
		{"spec.data.hash.value", hash["value"], &b.Spec.Data.Hash.Value},
		{"spec.signature.content", sig["content"], &b.Spec.Signature.Content},
		{"spec.signature.publicKey.content", key["content"], &b.Spec.Signature.PublicKey.Content},
	} {
		if *f.dst, err = jsonString(f.name, f.raw); err != nil {
			return nil, err
		}
	}
	switch {
	case b.APIVersion != hashedRekordAPIVersion:
		return nil, fmt.Errorf("%w: hashedrekord apiVersion %s, want %q", ErrMalformed, Quote(b.APIVersion), hashedRekordAPIVersion)
	case b.Kind != hashedRekordKind:
		return nil, fmt.Errorf("%w: hashedrekord kind %s, want %q", ErrMalformed, Quote(b.Kind), hashedRekordKind)
	case b.Spec.Data.Hash.Algorithm != hashedRekordAlgorithm:
		return nil, fmt.Errorf("%w: hashedrekord hash algorithm %s, want %q", ErrMalformed, Quote(b.Spec.Data.Hash.Algorithm), hashedRekordAlgorithm)
	case !isHex(b.Spec.Data.Hash.Value, 2*sha512.Size):
		return nil, fmt.Errorf("%w: hashedrekord hash value is not %d lowercase hex characters", ErrMalformed, 2*sha512.Size)
	}
	return &b, nil
}

// rekordObject decodes raw as a JSON object whose members are exactly names.
func rekordObject(raw json.RawMessage, path string, names ...string) (map[string]json.RawMessage, error) {
	if path == "" {
		path = "hashedrekord body"
	}
	raw = bytes.TrimSpace(raw)
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMalformed, path)
	}
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return nil, fmt.Errorf("%w: %s has no member %q", ErrMalformed, path, n)
		}
	}
	if len(obj) != len(names) {
		for k := range obj {
			known := false
			for _, n := range names {
				known = known || k == n
			}
			if !known {
				return nil, fmt.Errorf("%w: %s has unknown member %s", ErrMalformed, path, Quote(k))
			}
		}
	}
	return obj, nil
}
