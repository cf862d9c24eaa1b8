package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
)

// PEM block types of the keys this package reads and writes.
const (
	pemPublicKey  = "PUBLIC KEY"  // SubjectPublicKeyInfo (RFC 5280, RFC 8410)
	pemPrivateKey = "PRIVATE KEY" // PKCS #8 (RFC 5208, RFC 8410)
)

// ParsePublicKeyPEM decodes one PEM "PUBLIC KEY" block holding an Ed25519
// SubjectPublicKeyInfo. Any other block type or key type, PEM headers, data before or
// after the block, or a second block is an error wrapping ErrMalformed.
func ParsePublicKeyPEM(text []byte) (ed25519.PublicKey, error) {
	block, err := decodeOnePEM(text, pemPublicKey)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: public key: %w", ErrMalformed, err)
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: public key is %T, want Ed25519", ErrMalformed, key)
	}
	return pub, nil
}

// MarshalPublicKeyPEM encodes an Ed25519 public key as a PEM "PUBLIC KEY" block
// (SubjectPublicKeyInfo). The result is the same bytes for the same key.
func MarshalPublicKeyPEM(pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublicKey, Bytes: der}), nil
}

// ParsePrivateKeyPEM decodes one PEM "PRIVATE KEY" block holding an Ed25519 PKCS #8 key.
func ParsePrivateKeyPEM(text []byte) (ed25519.PrivateKey, error) {
	block, err := decodeOnePEM(text, pemPrivateKey)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %w", ErrMalformed, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: private key is %T, want Ed25519", ErrMalformed, key)
	}
	return priv, nil
}

// MarshalPrivateKeyPEM encodes an Ed25519 private key as a PEM "PRIVATE KEY" block (PKCS #8).
func MarshalPrivateKeyPEM(priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(priv), ed25519.PrivateKeySize)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

// Fingerprint is the hex SHA-256 of the raw 32-byte public key (not of its PEM or DER).
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// OperatorID is "op_" followed by the first 16 hex characters of Fingerprint(pub). It
// depends on the key alone, never on how its PEM text is laid out.
func OperatorID(pub ed25519.PublicKey) string {
	return "op_" + Fingerprint(pub)[:16]
}

// decodeOnePEM decodes text that is exactly one PEM block of the given type, without
// headers, with nothing but whitespace around it.
func decodeOnePEM(text []byte, blockType string) (*pem.Block, error) {
	trimmed := bytes.TrimSpace(text)
	if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		return nil, fmt.Errorf("%w: want a PEM %q block and nothing before it", ErrMalformed, blockType)
	}
	block, rest := pem.Decode(trimmed)
	switch {
	case block == nil:
		return nil, fmt.Errorf("%w: no PEM block", ErrMalformed)
	case block.Type != blockType:
		return nil, fmt.Errorf("%w: PEM block is %q, want %q", ErrMalformed, block.Type, blockType)
	case len(block.Headers) != 0:
		return nil, fmt.Errorf("%w: PEM block has headers", ErrMalformed)
	case len(rest) != 0:
		return nil, fmt.Errorf("%w: data after the PEM block", ErrMalformed)
	}
	return block, nil
}
