package protocol

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// TestVerifySignedHeaderReadsNamesExactly is hole 10 for the header a Submission keeps:
// the operator signs canonical JSON whose member names differ from the format's only in
// case, or that has an integer in exponent form. docs/PROTOCOL.md §3 names the members
// exactly and writes integers as digits, so each is malformed, however it was signed.
func TestVerifySignedHeaderReadsNamesExactly(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	pub := key.Public().(ed25519.PublicKey)
	honest := `{"chain_signature":"` + strings.Repeat("b", 64) + `","entries_root":"` + strings.Repeat("c", 64) +
		`","entry_count":10,"exported_at":"2026-11-21T10:00:00Z","first_prev_hash":"` + GenesisPrevHash +
		`","first_seq":1,"format":"cairn-chain-v2","last_hmac_hash":"` + strings.Repeat("a", 64) + `","last_seq":10,"version":2}`
	cases := map[string]struct {
		signed string
		want   error // nil: verifies
	}{
		"honest":                 {honest, nil},
		"Format in another case": {`{"Format":"cairn-chain-v2",` + strings.Replace(honest[1:], `"format":"cairn-chain-v2",`, "", 1), ErrMalformed},
		"entry_count 1e1":        {strings.Replace(honest, `"entry_count":10`, `"entry_count":1e1`, 1), ErrMalformed},
		"a signature member":     {strings.Replace(honest, `"version":2}`, `"signature":"x","version":2}`, 1), ErrMalformed},
	}
	for name, c := range cases {
		signed := []byte(c.signed)
		sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed))
		_, err := VerifySignedHeader(signed, sig, pub)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}
