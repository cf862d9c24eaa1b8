package protocol

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestVerifySignedHeader(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	pub := key.Public().(ed25519.PublicKey)
	h := ExportHeader{Format: ExportFormat, Version: ExportVersion, ExportedAt: "2026-11-21T10:00:00Z",
		EntryCount: 10, FirstSeq: 1, LastSeq: 10, FirstPrevHash: GenesisPrevHash,
		LastHMACHash: strings.Repeat("a", 64), ChainSignature: strings.Repeat("b", 64), EntriesRoot: strings.Repeat("c", 64)}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))
	got, err := VerifySignedHeader(signed, sig, pub)
	if err != nil || *got != h {
		t.Fatalf("VerifySignedHeader = %+v, %v", got, err)
	}
	other := ed25519.NewKeyFromSeed(append(make([]byte, 31), 1)).Public().(ed25519.PublicKey)
	for name, c := range map[string]struct {
		signed []byte
		sig    string
		pub    ed25519.PublicKey
		want   error
	}{
		"another key":         {signed, sig, other, ErrSignature},
		"an edited header":    {[]byte(strings.Replace(string(signed), `"entry_count":10`, `"entry_count":11`, 1)), sig, pub, ErrMalformed},
		"an edited hash":      {[]byte(strings.Replace(string(signed), strings.Repeat("a", 64), strings.Repeat("d", 64), 1)), sig, pub, ErrSignature},
		"not canonical":       {[]byte(" " + string(signed)), sig, pub, ErrMalformed},
		"an unknown member":   {[]byte(`{"extra":1,` + string(signed[1:])), sig, pub, ErrMalformed},
		"a missing member":    {[]byte(strings.Replace(string(signed), `"entries_root":"`+strings.Repeat("c", 64)+`",`, "", 1)), sig, pub, ErrMalformed},
		"a signature not b64": {signed, "!" + sig[1:], pub, ErrMalformed},
	} {
		if _, err := VerifySignedHeader(c.signed, c.sig, c.pub); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}
