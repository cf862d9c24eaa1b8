package protocol

import (
	"bytes"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The 0.0.2 body the request restates carries the same statement, in Rekor v2's words.
func TestHashedRekordV2Request(t *testing.T) {
	content := []byte("cross-anchor content")
	body, err := NewHashedRekord(content, rcptKey(1))
	if err != nil {
		t.Fatal(err)
	}
	request, v2, err := HashedRekordV2Request(body)
	if err != nil {
		t.Fatal(err)
	}
	if !IsRekorV2Body(v2) || IsRekorV2Body(body) {
		t.Fatalf("IsRekorV2Body: v2 %v, v1 %v", IsRekorV2Body(v2), IsRekorV2Body(body))
	}
	if err := VerifyHashedRekord(v2, content, rcptPub(1)); err != nil {
		t.Fatalf("the 0.0.2 body: %v", err)
	}
	a, _ := ParseHashedRekord(body)
	b, _ := ParseHashedRekord(v2)
	if !bytes.Equal(a.Digest, b.Digest) || !bytes.Equal(a.Signature, b.Signature) || !a.PublicKey.Equal(b.PublicKey) || b.APIVersion != "0.0.2" {
		t.Errorf("0.0.1 %+v and 0.0.2 %+v state different things", a, b)
	}
	var req struct {
		R struct {
			Digest    []byte `json:"digest"`
			Signature struct {
				Content  []byte `json:"content"`
				Verifier struct {
					PublicKey struct {
						RawBytes []byte `json:"rawBytes"`
					} `json:"publicKey"`
					KeyDetails string `json:"keyDetails"`
				} `json:"verifier"`
			} `json:"signature"`
		} `json:"hashedRekordRequestV002"`
	}
	if err := json.Unmarshal(request, &req); err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(rcptPub(1))
	digest := sha512.Sum512(content)
	if !bytes.Equal(req.R.Digest, digest[:]) || !bytes.Equal(req.R.Signature.Content, a.Signature) ||
		!bytes.Equal(req.R.Signature.Verifier.PublicKey.RawBytes, der) || req.R.Signature.Verifier.KeyDetails != "PKIX_ED25519_PH" {
		t.Errorf("request %s does not restate the body", request)
	}
	if _, _, err := HashedRekordV2Request([]byte(`{"apiVersion":"0.0.1"}`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("a malformed body: %v", err)
	}
}

func TestHashedRekordV2Rejects(t *testing.T) {
	content := []byte("cross-anchor content")
	v1, _ := NewHashedRekord(content, rcptKey(1))
	_, body, err := HashedRekordV2Request(v1)
	if err != nil {
		t.Fatal(err)
	}
	other1, _ := NewHashedRekord(content, rcptKey(2))
	_, other, _ := HashedRekordV2Request(other1)
	at := func(m map[string]any, path string) map[string]any { return rekordAt(m, "spec.hashedRekordV002"+path) }
	set := func(path, member string, v any) []byte {
		return editJSON(t, body, func(m map[string]any) { at(m, path)[member] = v })
	}
	del := func(path, member string) []byte {
		return editJSON(t, body, func(m map[string]any) { delete(at(m, path), member) })
	}
	b64 := base64.StdEncoding.EncodeToString
	short := sha512.Sum512([]byte("x"))
	p256, _ := ParseLogPublicKeyPEM([]byte(rcptForeignPEMs()["P-256"]))
	p256DER, _ := x509.MarshalPKIXPublicKey(p256)
	flipped := editJSON(t, body, func(m map[string]any) {
		s := at(m, ".signature")
		sig, _ := base64.StdEncoding.DecodeString(s["content"].(string))
		sig[3] ^= 1
		s["content"] = b64(sig)
	})
	cases := map[string]struct {
		body, content []byte
		want          error
	}{
		"other content":          {body, []byte("other"), ErrMismatch},
		"flipped signature":      {flipped, content, ErrSignature},
		"signed by other key":    {other, content, ErrKeyNotTrusted},
		"algorithm SHA2_256":     {set(".data", "algorithm", "SHA2_256"), content, ErrMalformed},
		"32-byte digest":         {set(".data", "digest", b64(short[:32])), content, ErrMalformed},
		"hex digest":             {set(".data", "digest", strings.Repeat("ab", 64)), content, ErrMalformed},
		"pure Ed25519 details":   {set(".signature.verifier", "keyDetails", "PKIX_ED25519"), content, ErrMalformed},
		"P-256 key":              {set(".signature.verifier.publicKey", "rawBytes", b64(p256DER)), content, ErrMalformed},
		"raw key, not DER":       {set(".signature.verifier.publicKey", "rawBytes", b64(rcptPub(1))), content, ErrMalformed},
		"unpadded base64":        {set(".signature", "content", strings.TrimRight(b64(make([]byte, 64)), "=")), content, ErrMalformed},
		"unknown member":         {set(".signature.verifier", "x509Certificate", map[string]any{}), content, ErrMalformed},
		"missing keyDetails":     {del(".signature.verifier", "keyDetails"), content, ErrMalformed},
		"missing data":           {del("", "data"), content, ErrMalformed},
		"kind rekord":            {editJSON(t, body, func(m map[string]any) { m["kind"] = "rekord" }), content, ErrMalformed},
		"apiVersion number":      {editJSON(t, body, func(m map[string]any) { m["apiVersion"] = 2 }), content, ErrMalformed},
		"0.0.1 spec under 0.0.2": {editJSON(t, v1, func(m map[string]any) { m["apiVersion"] = "0.0.2" }), content, ErrMalformed},
		"duplicate member":       {[]byte(strings.Replace(string(body), "{", `{"kind":"hashedrekord",`, 1)), content, ErrMalformed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := VerifyHashedRekord(c.body, c.content, rcptPub(1))
			if !errors.Is(err, c.want) {
				t.Fatalf("VerifyHashedRekord: %v, want %v", err, c.want)
			}
			var mm *MismatchError
			if errors.Is(c.want, ErrMismatch) && (!errors.As(err, &mm) || mm.Field != "data.digest") {
				t.Errorf("error %v is not a data.digest *MismatchError", err)
			}
		})
	}
}
