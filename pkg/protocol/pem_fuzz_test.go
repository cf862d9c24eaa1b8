package protocol

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// FuzzParsePEM feeds the three PEM parsers of outside input the same text: an operator's
// public key (registration, rotation), a transparency log's public key (Rekor's
// /api/v1/log/publicKey, a receipt's log key) and a private key (cairn's key files).
// What they accept must be exactly what the marshalers write back (the public forms are
// exact), the two public parsers must agree on an Ed25519 key, and an accepted private
// key must sign what its public key verifies.
func FuzzParsePEM(f *testing.F) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	pubPEM, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		f.Fatal(err)
	}
	privPEM, err := MarshalPrivateKeyPEM(priv)
	if err != nil {
		f.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	ecDER, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pubPEM)
	f.Add(privPEM)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}))
	f.Add(bytes.ReplaceAll(pubPEM, []byte("\n"), []byte("\r\n")))
	f.Add(append(append([]byte(nil), pubPEM...), pubPEM...))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		if k, err := ParsePublicKeyPEM(text); err == nil {
			again, err := MarshalPublicKeyPEM(k)
			if err != nil || !bytes.Equal(again, text) {
				t.Fatalf("ParsePublicKeyPEM accepted %q, which marshals back as %q (%v)", text, again, err)
			}
			if checkKeyOrder(k) != nil {
				t.Fatalf("ParsePublicKeyPEM accepted a key of small order: %x", []byte(k))
			}
			lk, err := ParseLogPublicKeyPEM(text)
			if err != nil {
				t.Fatalf("ParseLogPublicKeyPEM refused the operator key %q: %v", text, err)
			}
			if lpub, ok := lk.(ed25519.PublicKey); !ok || !lpub.Equal(k) {
				t.Fatalf("the two parsers read %q as different keys", text)
			}
		}
		if k, err := ParseLogPublicKeyPEM(text); err == nil {
			der, err := x509.MarshalPKIXPublicKey(k)
			if err != nil {
				t.Fatalf("ParseLogPublicKeyPEM accepted %q, a %T that does not marshal: %v", text, k, err)
			}
			if again := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}); !bytes.Equal(again, text) {
				t.Fatalf("ParseLogPublicKeyPEM accepted %q, which marshals back as %q", text, again)
			}
		}
		if k, err := ParsePrivateKeyPEM(text); err == nil {
			if len(k) != ed25519.PrivateKeySize {
				t.Fatalf("ParsePrivateKeyPEM accepted a %d-byte key", len(k))
			}
			msg := []byte("fuzz")
			if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, ed25519.Sign(k, msg)) {
				t.Fatalf("the private key of %q signs what its public key does not verify", text)
			}
			again, err := MarshalPrivateKeyPEM(k)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := ParsePrivateKeyPEM(again); err != nil || !back.Equal(k) {
				t.Fatalf("the private key of %q does not round-trip: %v", text, err)
			}
		}
	})
}
