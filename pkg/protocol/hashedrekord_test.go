package protocol

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// rekordAt returns the object at the dotted path below m.
func rekordAt(m map[string]any, path string) map[string]any {
	for _, p := range strings.Split(path, ".") {
		if p != "" {
			m = m[p].(map[string]any)
		}
	}
	return m
}

func TestHashedRekordRoundTrip(t *testing.T) {
	key := rcptKey(1)
	pub := rcptPub(1)
	anchorContent, err := CrossAnchorLogContent(caTestHash)
	if err != nil {
		t.Fatal(err)
	}
	statement, err := canonical.Marshal(map[string]any{"type": "withdrawal", "operator_id": caTestOp1, "at": caTestAt})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"cross-anchor": anchorContent, "statement": statement, "empty": nil} {
		t.Run(name, func(t *testing.T) {
			body, err := NewHashedRekord(content, key)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := canonical.Transform(body); err != nil || !bytes.Equal(again, body) {
				t.Errorf("body is not in RFC 8785 form: %s", body)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, body, "", "\t"); err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]byte{body, indented.Bytes()} {
				if err := VerifyHashedRekord(b, content, pub); err != nil {
					t.Errorf("VerifyHashedRekord(trusted): %v", err)
				}
				if err := VerifyHashedRekord(b, content, nil); err != nil {
					t.Errorf("VerifyHashedRekord(nil): %v", err)
				}
			}
			// The signature is Ed25519ph over the digest, not pure Ed25519.
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			sig, _ := base64.StdEncoding.DecodeString(rekordAt(m, "spec.signature")["content"].(string))
			digest := sha512.Sum512(content)
			if err := ed25519.VerifyWithOptions(pub, digest[:], sig, &ed25519.Options{Hash: crypto.SHA512}); err != nil {
				t.Errorf("not an Ed25519ph signature over the digest: %v", err)
			}
			if ed25519.Verify(pub, digest[:], sig) || ed25519.Verify(pub, content, sig) {
				t.Error("signature verifies as pure Ed25519")
			}
		})
	}
}

// TestHashedRekordLiteral checks the body's layout against one written by hand, with the
// signature checked against RFC 8032's Ed25519ph test vector (section 7.3, "abc").
func TestHashedRekordLiteral(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	body, err := NewHashedRekord([]byte("hello"), ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	got := editJSON(t, body, func(m map[string]any) { rekordAt(m, "spec.signature")["content"] = "SIG" })
	want := `{"apiVersion":"0.0.1","kind":"hashedrekord","spec":{"data":{"hash":{"algorithm":"sha512",` +
		`"value":"9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"}},` +
		`"signature":{"content":"SIG","publicKey":{"content":"LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0KTUNvd0JRWURLMlZ3QXlFQUE2RUh2L1BPRUw0ZGNOMFk1MHZBbVdmazFqQ2JwUTFmSGR5R1pCSlZNYmc9Ci0tLS0tRU5EIFBVQkxJQyBLRVktLS0tLQo="}}}}`
	if string(got) != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}

	rfcSeed, _ := hex.DecodeString("833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42")
	rfcSig, _ := hex.DecodeString("98a70222f0b8121aa9d30f813d683f809e462b469c7ff87639499bb94e6dae4131f85042463c2a355a2003d062adf5aaa10b8c61e636062aaad11c2a26083406")
	body, err = NewHashedRekord([]byte("abc"), ed25519.NewKeyFromSeed(rfcSeed))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	if sig := rekordAt(m, "spec.signature")["content"]; sig != base64.StdEncoding.EncodeToString(rfcSig) {
		t.Errorf("signature %v is not RFC 8032's Ed25519ph vector", sig)
	}
}

func TestVerifyHashedRekordRejects(t *testing.T) {
	content := []byte("cross-anchor content")
	body, err := NewHashedRekord(content, rcptKey(1))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewHashedRekord(content, rcptKey(2))
	if err != nil {
		t.Fatal(err)
	}
	otherDigest := sha512.Sum512([]byte("other"))
	otherPEM, _ := MarshalPublicKeyPEM(rcptPub(2))
	set := func(path, member string, v any) []byte {
		return editJSON(t, body, func(m map[string]any) { rekordAt(m, path)[member] = v })
	}
	del := func(path, member string) []byte {
		return editJSON(t, body, func(m map[string]any) { delete(rekordAt(m, path), member) })
	}
	flipped := editJSON(t, body, func(m map[string]any) {
		s := rekordAt(m, "spec.signature")
		sig, _ := base64.StdEncoding.DecodeString(s["content"].(string))
		sig[10] ^= 0x80
		s["content"] = base64.StdEncoding.EncodeToString(sig)
	})
	pemB64 := func(p string) string { return base64.StdEncoding.EncodeToString([]byte(p)) }
	type tc struct {
		body, content []byte
		want          error
	}
	cases := map[string]tc{
		"other content":        {body, []byte("other"), ErrMismatch},
		"value for other":      {set("spec.data.hash", "value", hex.EncodeToString(otherDigest[:])), []byte("other"), ErrSignature},
		"flipped signature":    {flipped, content, ErrSignature},
		"other key's PEM":      {set("spec.signature.publicKey", "content", pemB64(string(otherPEM))), content, ErrSignature},
		"signed by other key":  {other, content, ErrKeyNotTrusted},
		"apiVersion":           {set("", "apiVersion", "0.0.2"), content, ErrMalformed},
		"kind":                 {set("", "kind", "rekord"), content, ErrMalformed},
		"algorithm":            {set("spec.data.hash", "algorithm", "sha256"), content, ErrMalformed},
		"uppercase value":      {set("spec.data.hash", "value", strings.ToUpper(hex.EncodeToString(otherDigest[:]))), content, ErrMalformed},
		"127-hex value":        {set("spec.data.hash", "value", hex.EncodeToString(otherDigest[:])[1:]), content, ErrMalformed},
		"kind number":          {set("", "kind", 1), content, ErrMalformed},
		"spec string":          {set("", "spec", "x"), content, ErrMalformed},
		"unknown top member":   {set("", "extra", "x"), content, ErrMalformed},
		"unknown in hash":      {set("spec.data.hash", "extra", "x"), content, ErrMalformed},
		"content in data":      {set("spec.data", "content", "aGk="), content, ErrMalformed},
		"unknown in publicKey": {set("spec.signature.publicKey", "format", "x"), content, ErrMalformed},
		"missing apiVersion":   {del("", "apiVersion"), content, ErrMalformed},
		"missing signature":    {del("spec", "signature"), content, ErrMalformed},
		"missing value":        {del("spec.data.hash", "value"), content, ErrMalformed},
		"missing key content":  {del("spec.signature.publicKey", "content"), content, ErrMalformed},
		"bad signature base64": {set("spec.signature", "content", "!!!!"), content, ErrMalformed},
		"short signature":      {set("spec.signature", "content", base64.StdEncoding.EncodeToString(make([]byte, 63))), content, ErrMalformed},
		"bad key base64":       {set("spec.signature.publicKey", "content", "%%%"), content, ErrMalformed},
		"RSA key":              {set("spec.signature.publicKey", "content", pemB64(rcptForeignPEMs()["RSA"])), content, ErrMalformed},
		"P-256 key":            {set("spec.signature.publicKey", "content", pemB64(rcptForeignPEMs()["P-256"])), content, ErrMalformed},
		"raw key, not PEM":     {set("spec.signature.publicKey", "content", base64.StdEncoding.EncodeToString(rcptPub(1))), content, ErrMalformed},
		"truncated":            {body[:len(body)-1], content, ErrMalformed},
		"trailing data":        {append(append([]byte{}, body...), '1'), content, ErrMalformed},
		"array":                {[]byte(`[]`), content, ErrMalformed},
		"duplicate member":     {[]byte(strings.Replace(string(body), "{", `{"kind":"hashedrekord",`, 1)), content, ErrMalformed},
		"invalid utf-8":        {bytes.Replace(body, []byte("hashedrekord"), []byte("hashed\xffekord"), 1), content, ErrMalformed},
		"case-folded member":   {[]byte(strings.Replace(string(body), `"kind"`, `"KIND"`, 1)), content, ErrMalformed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := VerifyHashedRekord(c.body, c.content, rcptPub(1))
			if !errors.Is(err, c.want) {
				t.Fatalf("VerifyHashedRekord: %v, want %v", err, c.want)
			}
			var mm *MismatchError
			if errors.Is(c.want, ErrMismatch) && (!errors.As(err, &mm) || mm.Field != "data.hash.value") {
				t.Errorf("error %v is not a data.hash.value *MismatchError", err)
			}
		})
	}
	if err := VerifyHashedRekord(other, content, nil); err != nil {
		t.Errorf("self-consistent body with trusted nil: %v", err)
	}
}

func TestNewHashedRekordBadKey(t *testing.T) {
	if body, err := NewHashedRekord([]byte("x"), rcptKey(1)[:40]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("NewHashedRekord = %s, %v; want ErrMalformed", body, err)
	}
}
