package protocol

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// identityKATPEM is a fixed Ed25519 public key with known fingerprint and operator ID.
const identityKATPEM = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAQQXh/PafmX6IREAtfxOPzqpKs8FWwV/5t3ZP7AWYSHQ=\n-----END PUBLIC KEY-----\n"

// identityTestKey returns a deterministic Ed25519 key derived from n.
func identityTestKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

// identityRSAKey is generated once: RSA generation is slow.
var identityRSAKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func identityPEM(t *testing.T, typ string, der []byte, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func identityMustPublicPEM(t *testing.T, pub ed25519.PublicKey) []byte {
	t.Helper()
	p, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIdentityKnownAnswer(t *testing.T) {
	pub, err := ParsePublicKeyPEM([]byte(identityKATPEM))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Fingerprint(pub), "032760a40378d8c2d5f02f764c992ee46b8a19434eae6c3731007b16fb0185ed"; got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
	if got, want := OperatorID(pub), "op_032760a40378d8c2"; got != want {
		t.Errorf("OperatorID = %s, want %s", got, want)
	}
	if got := identityMustPublicPEM(t, pub); string(got) != identityKATPEM {
		t.Errorf("MarshalPublicKeyPEM = %q, want %q", got, identityKATPEM)
	}
}

func TestParsePublicKeyPEMAccepts(t *testing.T) {
	key := identityTestKey(1)
	pub := key.Public().(ed25519.PublicKey)
	good := identityMustPublicPEM(t, pub)
	cases := map[string][]byte{
		"generated": good,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePublicKeyPEM(in)
			if err != nil {
				t.Fatalf("ParsePublicKeyPEM: %v", err)
			}
			if !got.Equal(pub) {
				t.Fatalf("ParsePublicKeyPEM = %x, want %x", got, pub)
			}
		})
	}
}

func TestParsePublicKeyPEMRejects(t *testing.T) {
	good := identityMustPublicPEM(t, identityTestKey(1).Public().(ed25519.PublicKey))
	other := identityMustPublicPEM(t, identityTestKey(2).Public().(ed25519.PublicKey))
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, rsaErr := x509.MarshalPKIXPublicKey(&identityRSAKey().PublicKey)
	ecDER, ecErr := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	privPEM, err := MarshalPrivateKeyPEM(identityTestKey(1))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(good)
	cases := map[string][]byte{
		"empty":               nil,
		"whitespace":          []byte(" \n\t\n"),
		"garbage":             []byte("not a key at all"),
		"raw base64":          []byte(base64.StdEncoding.EncodeToString(block.Bytes)),
		"RSA":                 identityPEM(t, "PUBLIC KEY", rsaDER, rsaErr),
		"P-256":               identityPEM(t, "PUBLIC KEY", ecDER, ecErr),
		"private key block":   privPEM,
		"two blocks":          append(append([]byte{}, good...), other...),
		"same block twice":    append(append([]byte{}, good...), good...),
		"trailing junk":       append(append([]byte{}, good...), "junk"...),
		"leading text":        append([]byte("my key:\n"), good...),
		"PEM headers":         bytes.Replace(good, []byte("-----\n"), []byte("-----\nComment: mine\n\n"), 1),
		"RSA PUBLIC KEY type": identityPEM(t, "RSA PUBLIC KEY", block.Bytes, nil),
		"truncated DER":       identityPEM(t, "PUBLIC KEY", block.Bytes[:len(block.Bytes)-1], nil),
		"DER with extra byte": identityPEM(t, "PUBLIC KEY", append(append([]byte{}, block.Bytes...), 0), nil),
		"no END line":         []byte(strings.SplitAfter(string(good), "\n")[0] + strings.SplitAfter(string(good), "\n")[1]),
		// Issue 14, hole 10: only the exact form is read, so every verifier reads the same.
		"no trailing newline": bytes.TrimRight(good, "\n"),
		"CRLF":                bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		"CRLF no trailing":    bytes.TrimRight(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")), "\r\n"),
		"trailing blank line": append(append([]byte{}, good...), '\n'),
		"leading blank line":  append([]byte("\n"), good...),
		"leading space":       append([]byte(" "), good...),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePublicKeyPEM(in)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParsePublicKeyPEM = %x, %v; want ErrMalformed", got, err)
			}
		})
	}
}

func TestOperatorIDLayoutIndependent(t *testing.T) {
	pub := identityTestKey(3).Public().(ed25519.PublicKey)
	good := identityMustPublicPEM(t, pub)
	block, _ := pem.Decode(good)
	b64 := base64.StdEncoding.EncodeToString(block.Bytes)
	wrap := func(width int, eol string) []byte {
		var sb strings.Builder
		sb.WriteString("-----BEGIN PUBLIC KEY-----" + eol)
		for i := 0; i < len(b64); i += width {
			sb.WriteString(b64[i:min(i+width, len(b64))] + eol)
		}
		sb.WriteString("-----END PUBLIC KEY-----" + eol)
		return []byte(sb.String())
	}
	want := OperatorID(pub)
	if !regexp.MustCompile(`^op_[0-9a-f]{16}$`).MatchString(want) {
		t.Fatalf("OperatorID = %q, want op_ and 16 lowercase hex", want)
	}
	if want != "op_"+Fingerprint(pub)[:16] {
		t.Fatalf("OperatorID = %q is not op_ + Fingerprint[:16] (%s)", want, Fingerprint(pub))
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(Fingerprint(pub)) {
		t.Fatalf("Fingerprint = %q, want 64 lowercase hex", Fingerprint(pub))
	}
	// The ID is of the key alone; the one PEM layout read is the exact form
	// (issue 14, hole 10), so a re-wrapped key is refused rather than read differently.
	cases := map[string][]byte{
		"canonical":       good,
		"64 a line":       wrap(64, "\n"),
		"one char a line": wrap(1, "\n"),
		"4 a line":        wrap(4, "\n"),
		"30 a line CRLF":  wrap(30, "\r\n"),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePublicKeyPEM(in)
			if !bytes.Equal(in, good) {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("ParsePublicKeyPEM(%q) = %v, want ErrMalformed", in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePublicKeyPEM(%q): %v", in, err)
			}
			if id := OperatorID(got); id != want {
				t.Fatalf("OperatorID = %s, want %s", id, want)
			}
		})
	}
}

func TestPrivateKeyPEMRoundTrip(t *testing.T) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	text, err := MarshalPrivateKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePrivateKeyPEM(text)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(key) {
		t.Fatal("private key changed in PEM round trip")
	}
	if got, err := ParsePrivateKeyPEM(bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))); err != nil || !got.Equal(key) {
		t.Fatalf("CRLF private key: %v", err)
	}
}

func TestParsePrivateKeyPEMRejects(t *testing.T) {
	rsaDER, rsaErr := x509.MarshalPKCS8PrivateKey(identityRSAKey())
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, ecErr := x509.MarshalPKCS8PrivateKey(ecKey)
	good, err := MarshalPrivateKeyPEM(identityTestKey(4))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":             nil,
		"garbage":           []byte("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n"),
		"RSA PKCS#8":        identityPEM(t, "PRIVATE KEY", rsaDER, rsaErr),
		"P-256 PKCS#8":      identityPEM(t, "PRIVATE KEY", ecDER, ecErr),
		"public key block":  identityMustPublicPEM(t, identityTestKey(4).Public().(ed25519.PublicKey)),
		"two blocks":        append(append([]byte{}, good...), good...),
		"trailing junk":     append(append([]byte{}, good...), "junk"...),
		"OPENSSH-ish block": bytes.ReplaceAll(good, []byte("PRIVATE KEY"), []byte("OPENSSH PRIVATE KEY")),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePrivateKeyPEM(in)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParsePrivateKeyPEM = %d bytes, %v; want ErrMalformed", len(got), err)
			}
		})
	}
}

func TestMarshalPEMRejectsBadLengths(t *testing.T) {
	cases := map[string]int{"empty": 0, "short": 31, "long": 33, "private size": 64}
	for name, n := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := MarshalPublicKeyPEM(make(ed25519.PublicKey, n)); !errors.Is(err, ErrMalformed) {
				t.Errorf("MarshalPublicKeyPEM(%d bytes) = %v, want ErrMalformed", n, err)
			}
			if n == ed25519.PrivateKeySize {
				return
			}
			if _, err := MarshalPrivateKeyPEM(make(ed25519.PrivateKey, n)); !errors.Is(err, ErrMalformed) {
				t.Errorf("MarshalPrivateKeyPEM(%d bytes) = %v, want ErrMalformed", n, err)
			}
		})
	}
}
