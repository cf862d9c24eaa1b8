package tlog

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/pkg/witness"
)

// GenerateLogKey returns a new checkpoint signing key for an embedded log named origin (a
// schema-less URL such as "cairn.example.com/federation/prod"), in the signed-note private
// key form EmbeddedOptions.PrivateKey takes. Keep it secret: a Kubernetes Secret or a 0600
// file.
func GenerateLogKey(origin string) (string, error) {
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	return skey, err
}

// parseLogKey returns the signer of a signed-note Ed25519 private key and the key itself,
// which also signs entry timestamps.
func parseLogKey(skey string) (note.Signer, ed25519.PrivateKey, error) {
	signer, err := note.NewSigner(strings.TrimSpace(skey))
	if err != nil {
		return nil, nil, fmt.Errorf("embedded log key: %w", err)
	}
	// PRIVATE+KEY+<name>+<hash>+<base64 of 0x01 and the 32-byte seed>
	fields := strings.SplitN(strings.TrimSpace(skey), "+", 5)
	if len(fields) != 5 {
		return nil, nil, errors.New("embedded log key: not a signed-note private key")
	}
	raw, err := base64.StdEncoding.DecodeString(fields[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return nil, nil, errors.New("embedded log key: not an Ed25519 signed-note key")
	}
	return signer, ed25519.NewKeyFromSeed(raw[1:]), nil
}

// LogKeyPEM returns the public key of a signed-note private key as a PKIX PEM block, the
// form Rekor serves its key in and a Federation pins.
func LogKeyPEM(skey string) ([]byte, error) {
	_, priv, err := parseLogKey(skey)
	if err != nil {
		return nil, err
	}
	return marshalKeyPEM(priv.Public())
}

func marshalKeyPEM(key crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// LogVerifierKey returns the signed-note verifier key of a signed-note private key,
// "<origin>+<hash>+<base64 key>": the line a witness names the log by.
func LogVerifierKey(skey string) (string, error) {
	_, priv, err := parseLogKey(skey)
	if err != nil {
		return "", err
	}
	fields := strings.SplitN(strings.TrimSpace(skey), "+", 4)
	return witness.LogKey{Origin: fields[2], Public: priv.Public().(ed25519.PublicKey)}.String(), nil
}
