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
// SubjectPublicKeyInfo, in exactly the form MarshalPublicKeyPEM writes (see
// decodeExactPEM). Any other block type or key type, a key of small order (see
// checkKeyOrder), PEM headers, any other layout (CRLF, blank lines, data before or after
// the block, a missing final LF, other line lengths) or a second block is an error
// wrapping ErrMalformed.
func ParsePublicKeyPEM(text []byte) (ed25519.PublicKey, error) {
	block, err := decodeExactPEM(text, pemPublicKey)
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
	if err := checkKeyOrder(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// smallOrderY are the encodings, sign bit cleared, of the y-coordinates of the 8 Ed25519
// points of order 1, 2, 4 or 8: 1, p-1, 0, the two of order 8, and p and p+1, which
// crypto/ed25519 takes as non-canonical spellings of 0 and 1. With the sign bit either
// way they give every encoding (14 in all) that crypto/ed25519 decodes to such a point.
var smallOrderY = func() (ys [7][ed25519.PublicKeySize]byte) {
	for i, h := range [...]string{
		"0100000000000000000000000000000000000000000000000000000000000000", // 1: identity
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p-1: order 2
		"0000000000000000000000000000000000000000000000000000000000000000", // 0: order 4
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p ≡ 0
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p+1 ≡ 1
	} {
		if _, err := hex.Decode(ys[i][:], []byte(h)); err != nil {
			panic("protocol: smallOrderY: " + err.Error()) // a constant above is not hex
		}
	}
	return ys
}()

// checkKeyOrder refuses a public key of the wrong length or on a point of small order.
// Under a small-order key anyone can forge signatures: R = identity, S = 0 verifies every
// message under the identity point and some messages under the others. The error wraps
// ErrMalformed.
func checkKeyOrder(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	var y [ed25519.PublicKeySize]byte
	copy(y[:], pub)
	y[31] &= 0x7f // the sign of x
	for _, small := range smallOrderY {
		if y == small {
			return fmt.Errorf("%w: public key is an Ed25519 point of small order, under which anyone can forge signatures", ErrMalformed)
		}
	}
	return nil
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

// decodeExactPEM decodes text that is one PEM block of the given type in its one exact
// form, the bytes encoding/pem writes for it: "-----BEGIN <type>-----" LF, the base64 of
// the DER in lines of 64 characters (the last shorter) each ended by LF, "-----END
// <type>-----" LF, and nothing else. Public keys are read this way, so every verifier
// reads a key's text the same way.
func decodeExactPEM(text []byte, blockType string) (*pem.Block, error) {
	block, err := decodeOnePEM(text, blockType)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pem.EncodeToMemory(block), text) {
		return nil, fmt.Errorf("%w: the %q PEM block is not in its exact form (LF line ends, 64-character lines, nothing around it)", ErrMalformed, blockType)
	}
	return block, nil
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
		return nil, fmt.Errorf("%w: PEM block is %s, want %q", ErrMalformed, Quote(block.Type), blockType)
	case len(block.Headers) != 0:
		return nil, fmt.Errorf("%w: PEM block has headers", ErrMalformed)
	case len(rest) != 0:
		return nil, fmt.Errorf("%w: data after the PEM block", ErrMalformed)
	}
	return block, nil
}
