package witness_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-dev/cairn/pkg/witness"
)

// logNote makes a checkpoint of size and a root derived from seed, signed by a fresh log
// key as tessera signs it.
func logNote(t *testing.T, origin string, size int, seed byte) []byte {
	t.Helper()
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	root := bytes.Repeat([]byte{seed}, 32)
	text := fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(root))
	signed, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func textOf(n []byte) []byte {
	body, _, _ := bytes.Cut(n, []byte("\n\n"))
	return append(body, '\n')
}

func newCosigner(t *testing.T, name string) (*witness.Cosigner, string, string) {
	t.Helper()
	skey, vkey, err := witness.GenerateSignerKey(name, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c, err := witness.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	return c, skey, vkey
}

// Cairn's cosignature verifies with transparency-dev's implementation, timestamp included.
func TestCosignatureVerifiesWithFormats(t *testing.T) {
	c, _, vkey := newCosigner(t, "witness.example/w1")
	cp := logNote(t, "log.example/a", 7, 1)
	at := time.Unix(1_790_000_000, 0)
	line, err := c.Cosign(textOf(cp), at)
	if err != nil {
		t.Fatal(err)
	}
	v, err := fnote.NewVerifierForCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(append(cp, line...), note.VerifierList(v))
	if err != nil {
		t.Fatalf("formats does not verify Cairn's cosignature: %v", err)
	}
	got, err := fnote.CoSigV1Timestamp(n.Sigs[0])
	if err != nil || !got.Equal(at) {
		t.Fatalf("timestamp %v, %v; want %v", got, err, at)
	}
	// The same line over another checkpoint does not verify.
	other := logNote(t, "log.example/a", 7, 2)
	if _, err := note.Open(append(other, line...), note.VerifierList(v)); err == nil {
		t.Fatal("formats verified a cosignature moved to another checkpoint")
	}
}

// A cosignature made by transparency-dev's signer, from a key note.GenerateKey made,
// verifies under Cairn's policy, and both derive the same verifier key.
func TestFormatsCosignatureVerifiesWithCairn(t *testing.T) {
	skey, plainVkey, err := note.GenerateKey(rand.Reader, "witness.example/w2")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := fnote.VKeyToCosignatureV1(plainVkey)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := witness.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	if mine.Key().String() != vkey {
		t.Fatalf("Cairn derives %s from the key, formats %s", mine.Key(), vkey)
	}
	cp := logNote(t, "log.example/b", 3, 5)
	n, err := note.Open(cp, note.VerifierList(mustVerifier(t, cp)))
	if err != nil {
		t.Fatal(err)
	}
	cosigned, err := note.Sign(n, signer)
	if err != nil {
		t.Fatal(err)
	}
	p := policy(t, "witness w2 "+vkey+"\nquorum w2\n")
	verdict, err := p.Check(cosigned)
	if err != nil || !verdict.Satisfied || len(verdict.Cosignatures) != 1 {
		t.Fatalf("Cairn's check of a formats cosignature: %+v, %v", verdict, err)
	}
	if d := time.Since(verdict.Cosignatures[0].Time); d < 0 || d > time.Minute {
		t.Fatalf("cosignature time %v", verdict.Cosignatures[0].Time)
	}
	// A plain Ed25519 verifier key of the same witness is not a cosignature key.
	if _, err := witness.ParseKey(plainVkey); !errors.Is(err, witness.ErrBadKey) {
		t.Fatalf("ParseKey(type 0x01 key) = %v, want ErrBadKey", err)
	}
}

// mustVerifier returns a verifier of the log signature on cp that accepts any key: the
// log's key is not what these tests are about.
func mustVerifier(t *testing.T, cp []byte) note.Verifier {
	t.Helper()
	_, sigs, _ := bytes.Cut(cp, []byte("\n\n"))
	name, rest, _ := strings.Cut(strings.TrimPrefix(string(sigs), "\u2014 "), " ")
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	return anyVerifier{name: name, hash: uint32(raw[0])<<24 | uint32(raw[1])<<16 | uint32(raw[2])<<8 | uint32(raw[3])}
}

type anyVerifier struct {
	name string
	hash uint32
}

func (v anyVerifier) Name() string            { return v.name }
func (v anyVerifier) KeyHash() uint32         { return v.hash }
func (v anyVerifier) Verify(_, _ []byte) bool { return true }
func policy(t *testing.T, text string) *witness.Policy {
	t.Helper()
	p, err := witness.ParsePolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseKeyRefusesWrongHashAndForms(t *testing.T) {
	_, _, vkey := newCosigner(t, "w")
	if _, err := witness.ParseKey(vkey); err != nil {
		t.Fatal(err)
	}
	name, rest, _ := strings.Cut(vkey, "+")
	hash, key, _ := strings.Cut(rest, "+")
	for _, bad := range []string{
		"",
		name,
		"x+" + hash + "+" + key,            // renamed: the hash no longer matches
		name + "+00000000+" + key,          // wrong hash
		name + "+" + hash + "+" + key[:20], // short key
		name + "+" + hash + "+" + key + "=",
		"a b+" + hash + "+" + key,
	} {
		if _, err := witness.ParseKey(bad); !errors.Is(err, witness.ErrBadKey) {
			t.Errorf("ParseKey(%q) = %v, want ErrBadKey", bad, err)
		}
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64enc(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
