package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// federationKey signs the receipt vectors; the vectors trust its public half.
var federationKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))

// testReceipt is a receipt over three operators, signed by key.
func testReceipt(tb testing.TB, key ed25519.PrivateKey) []byte {
	tb.Helper()
	var ps []Participant
	for i := byte(1); i <= 3; i++ {
		op := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x10 + i}, ed25519.SeedSize))
		ps = append(ps, Participant{
			OperatorID:     OperatorID(op.Public().(ed25519.PublicKey)),
			ChainSignature: ChainSignature(testSecret, strings.Repeat(fmt.Sprintf("%x", i), 64), int64(i)*100),
		})
	}
	SortParticipants(ps)
	at := FormatAnchoredAt(time.Date(2026, 11, 21, 18, 0, 0, 123456789, time.UTC))
	hash, err := CrossAnchorHash(ps, at)
	if err != nil {
		tb.Fatal(err)
	}
	// Legacy: the committed vectors of the format before issue 14 keep their bytes.
	r := &Receipt{AnchorID: "anchor-20261121-001", AnchoredAt: at, CrossAnchorHash: hash, ParticipatingOperators: ps, Legacy: true}
	raw, err := SignReceipt(r, key)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// editJSON decodes a JSON object, lets edit change it and encodes it again, as a
// tamperer would change a signed document. Numbers keep their exact digits.
func editJSON(tb testing.TB, raw []byte, edit func(map[string]any)) []byte {
	tb.Helper()
	m := decodeObject(tb, raw)
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// receiptVectors are the receipt cases, with the verdict when the federation key is
// trusted ("trusted_key") and when no key is ("no_key").
func receiptVectors(tb testing.TB) map[string]vector {
	fedPEM, err := MarshalPublicKeyPEM(federationKey.Public().(ed25519.PublicKey))
	if err != nil {
		tb.Fatal(err)
	}
	valid := testReceipt(tb, federationKey)
	cases := map[string]struct {
		desc          string
		receipt       []byte
		trusted, none string
	}{
		"valid": {"an honest receipt over three operators, not yet logged", valid, "ok", "no_trusted_key"},
		"with-tlog-entry": {"a legacy receipt with an (unsigned) tlog_entry added: it names no log key, so the entry is bound to none", editJSON(tb, valid, func(m map[string]any) {
			m["tlog_entry"] = map[string]any{"log_index": 7}
		}), "no_trusted_key", "no_trusted_key"},
		"reordered-participants": {"the first two participants swapped", editJSON(tb, valid, func(m map[string]any) {
			ps := m["participating_operators"].([]any)
			ps[0], ps[1] = ps[1], ps[0]
		}), "mismatch participating_operators", "mismatch participating_operators"},
		"changed-anchored-at": {"anchored_at moved by one nanosecond", editJSON(tb, valid, func(m map[string]any) {
			m["anchored_at"] = strings.Replace(m["anchored_at"].(string), "123456789", "123456790", 1)
		}), "mismatch cross_anchor_hash", "mismatch cross_anchor_hash"},
		"signed-by-another-key": {"the same anchor signed by a key other than the federation's, which the receipt names",
			testReceipt(tb, otherKey), "key_not_trusted", "no_trusted_key"},
		"added-member": {"a top-level member added after signing", editJSON(tb, valid, func(m map[string]any) {
			m["note"] = "also anchored elsewhere"
		}), "signature", "signature"},
		"flipped-signature": {"one character of the federation signature changed", editJSON(tb, valid, func(m map[string]any) {
			m["federation_signature"] = flipBase64Char(m["federation_signature"].(string), 10)
		}), "signature", "signature"},
		"truncated": {"the receipt's JSON cut short", valid[:len(valid)/2], "malformed", "malformed"},
	}
	out := map[string]vector{}
	for name, c := range cases {
		out[name] = vector{
			Desc:     c.desc,
			Kind:     "receipt",
			Inputs:   map[string]string{"receipt": string(c.receipt), "public_key_pem": string(fedPEM)},
			Expected: map[string]string{"trusted_key": c.trusted, "no_key": c.none},
		}
	}
	logged := loggedReceiptVectors(tb)
	for name, c := range receiptEdgeVectors(tb) {
		logged[name] = c
	}
	for name, c := range merkleReceiptVectors(tb) {
		logged["merkle-"+name] = c
	}
	for name, c := range logged {
		out[name] = vector{
			Desc:     c.desc,
			Kind:     "receipt",
			Inputs:   map[string]string{"receipt": string(c.receipt), "public_key_pem": string(mustMarshalPEM(tb, c.key))},
			Expected: map[string]string{"trusted_key": c.trusted, "no_key": c.none},
		}
	}
	return out
}

// flipBase64Char changes the base64 character at i to another one, so the text stays
// well-formed base64 but decodes to different bytes.
func flipBase64Char(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
