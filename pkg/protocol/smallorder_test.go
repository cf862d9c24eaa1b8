package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"testing"
)

// smallOrderKeys are every 32-byte encoding of an Ed25519 point of order 1, 2, 4 or 8:
// the 8 points in canonical form, then the 6 non-canonical encodings (y ≥ p, or x = 0
// with the sign bit set) that crypto/ed25519 decodes to 4 of them.
var smallOrderKeys = map[string]string{
	"identity (order 1)":        "0100000000000000000000000000000000000000000000000000000000000000",
	"y=-1 (order 2)":            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"y=0, x even (order 4)":     "0000000000000000000000000000000000000000000000000000000000000000",
	"y=0, x odd (order 4)":      "0000000000000000000000000000000000000000000000000000000000000080",
	"order 8, first, x even":    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"order 8, first, x odd":     "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
	"order 8, second, x even":   "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"order 8, second, x odd":    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
	"non-canonical identity -0": "0100000000000000000000000000000000000000000000000000000000000080",
	"non-canonical y=-1, -0":    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"non-canonical y=p, x even": "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"non-canonical y=p, x odd":  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"non-canonical y=p+1":       "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"non-canonical y=p+1, -0":   "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
}

// forgedSignature is R = the identity point, S = 0: it matches every message under the
// identity key, and a fraction of all messages under every other small-order key.
var forgedSignature = append([]byte{1}, make([]byte, ed25519.SignatureSize-1)...)

// spkiPEM wraps a raw key in a PEM SubjectPublicKeyInfo, as ParsePublicKeyPEM reads it.
func spkiPEM(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(raw))
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublicKey, Bytes: der})
}

// TestSmallOrderKeysForgeSignatures shows why the keys are refused: crypto/ed25519 takes
// each of them, and R = identity, S = 0 verifies some message under every one of them
// (any message under the identity), without any private key.
func TestSmallOrderKeysForgeSignatures(t *testing.T) {
	for name, h := range smallOrderKeys {
		pub, _ := hex.DecodeString(h)
		forged := -1
		for i := 0; i < 256 && forged < 0; i++ {
			if ed25519.Verify(pub, fmt.Appendf(nil, "message %d", i), forgedSignature) {
				forged = i
			}
		}
		if forged < 0 {
			t.Errorf("%s: no message of 256 verified under the forged signature", name)
		}
	}
}

// TestSmallOrderKeysAreRefused is issue 14's hole 7: every parser of a public key refuses
// every small-order encoding.
func TestSmallOrderKeysAreRefused(t *testing.T) {
	if len(smallOrderKeys) != 14 {
		t.Fatalf("%d encodings listed, want 8 canonical and 6 non-canonical", len(smallOrderKeys))
	}
	for name, h := range smallOrderKeys {
		raw, err := hex.DecodeString(h)
		if err != nil || len(raw) != ed25519.PublicKeySize {
			t.Fatalf("%s: bad test key %q", name, h)
		}
		text := spkiPEM(t, raw)
		t.Run(name, func(t *testing.T) {
			if _, err := ParsePublicKeyPEM(text); !errors.Is(err, ErrMalformed) {
				t.Errorf("ParsePublicKeyPEM: %v, want ErrMalformed", err)
			}
			if _, err := ParseLogPublicKeyPEM(text); !errors.Is(err, ErrMalformed) {
				t.Errorf("ParseLogPublicKeyPEM: %v, want ErrMalformed", err)
			}
			opts := VerifyOptions{PublicKey: raw}
			if _, err := VerifyExport(bytes.NewReader(writeExport(t, testChain(t, 1, 8), testKey, true)), opts); !errors.Is(err, ErrMalformed) {
				t.Errorf("VerifyExport trusting it: %v, want ErrMalformed", err)
			}
		})
	}
}

// TestIdentityKeyExportForgery: an operator registered with the identity key (by mistake
// or on purpose) gets exports that anyone can sign. The export's envelope names the
// identity key and carries R = identity, S = 0.
func TestIdentityKeyExportForgery(t *testing.T) {
	identity, _ := hex.DecodeString(smallOrderKeys["identity (order 1)"])
	var top map[string]json.RawMessage
	if err := json.Unmarshal(writeExport(t, testChain(t, 3, 8), testKey, false), &top); err != nil {
		t.Fatal(err)
	}
	sig, err := json.Marshal(EnvelopeSignature{
		Algorithm: SignatureAlgorithm,
		PublicKey: string(spkiPEM(t, identity)),
		Value:     base64.StdEncoding.EncodeToString(forgedSignature),
	})
	if err != nil {
		t.Fatal(err)
	}
	top["signature"] = sig
	forged, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	for mode, opts := range map[string]VerifyOptions{
		"no trusted key":        {},
		"secret":                {Secret: testSecret},
		"trusting the identity": {PublicKey: identity},
	} {
		if _, err := VerifyExport(bytes.NewReader(forged), opts); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: verdict %q (%v), want malformed", mode, verdict(err), err)
		}
	}
}
