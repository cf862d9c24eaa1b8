package protocol

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// rcptReceipt returns an unsigned, consistent receipt with n participants.
func rcptReceipt(tb testing.TB, n int) *Receipt {
	tb.Helper()
	ps := make([]Participant, n)
	for i := range ps {
		sum := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		ps[i] = Participant{OperatorID: fmt.Sprintf("op_%016x", uint64(i+1)*0x9e3779b97f4a7c15), ChainSignature: hex.EncodeToString(sum[:])}
	}
	SortParticipants(ps)
	h, err := CrossAnchorHash(ps, caTestAt)
	if err != nil {
		tb.Fatal(err)
	}
	return &Receipt{AnchorID: "anchor-20261121-001", AnchoredAt: caTestAt, CrossAnchorHash: h, ParticipatingOperators: ps}
}

func rcptSigned(tb testing.TB, n int, key ed25519.PrivateKey) []byte {
	tb.Helper()
	raw, err := SignReceipt(rcptReceipt(tb, n), key)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func rcptParticipant(m map[string]any, i int) map[string]any {
	return m["participating_operators"].([]any)[i].(map[string]any)
}

func TestReceiptRoundTrip(t *testing.T) {
	key := rcptKey(1)
	idx, url := int64(42), "https://log.example/api/v1/log/entries?a=1&b=<2>"
	logged := rcptReceipt(t, 3)
	// A legacy receipt may name its log entry without the log's key; the current format
	// names all or nothing (TestVerifyReceiptRejects).
	logged.TLogLogIndex, logged.TLogURL, logged.Legacy = &idx, &url, true
	loggedRaw, err := SignReceipt(logged, key)
	if err != nil {
		t.Fatal(err)
	}
	raw := rcptSigned(t, 3, key)
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		raw        []byte
		tlogDetail string
	}{
		"as signed":      {raw, "no log entry yet"},
		"compacted":      {compact.Bytes(), "no log entry yet"},
		"members sorted": {editJSON(t, raw, func(map[string]any) {}), "no log entry yet"},
		"logged":         {loggedRaw, "no log entry yet"},
	}
	names := []string{"parse", "participants_order", "cross_anchor_hash", "federation_signature", "trusted_key", "tlog_entry"}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rep, err := VerifyReceipt(c.raw, key.Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatalf("VerifyReceipt: %v", err)
			}
			if len(rep.Checks) != len(names) {
				t.Fatalf("checks %+v", rep.Checks)
			}
			for i, ch := range rep.Checks {
				last := i == len(names)-1
				if ch.Name != names[i] || ch.OK == last || ch.Skipped != last {
					t.Errorf("check %d = %+v", i, ch)
				}
			}
			if d := rep.Checks[len(names)-1].Detail; d != c.tlogDetail {
				t.Errorf("tlog_entry detail %q, want %q", d, c.tlogDetail)
			}
			if r := rep.Receipt; r == nil || r.AnchorID != "anchor-20261121-001" || len(r.ParticipatingOperators) != 3 {
				t.Errorf("decoded receipt %+v", r)
			}
		})
	}
	// A legacy receipt names no log key, so a tlog_entry added to it is checked under
	// nothing: it must fail rather than pass unverified.
	withEntry := editJSON(t, loggedRaw, func(m map[string]any) { m["tlog_entry"] = map[string]any{"proof": 1.5} })
	rep, err := VerifyReceipt(withEntry, key.Public().(ed25519.PublicKey))
	if !errors.Is(err, ErrNoTrustedKey) {
		t.Errorf("legacy receipt with a tlog_entry and no log key: err = %v, want ErrNoTrustedKey", err)
	}
	if last := rep.Checks[len(rep.Checks)-1]; last.Name != "tlog_entry" || last.OK || last.Skipped {
		t.Errorf("last check %+v, want a failed tlog_entry", last)
	}
	rep, _ = VerifyReceipt(loggedRaw, key.Public().(ed25519.PublicKey))
	if r := rep.Receipt; r.TLogLogIndex == nil || *r.TLogLogIndex != 42 || r.TLogURL == nil || *r.TLogURL != url {
		t.Errorf("tlog fields decoded as %v, %v", r.TLogLogIndex, r.TLogURL)
	}
}

func TestVerifyReceiptRejects(t *testing.T) {
	key, other := rcptKey(1), rcptKey(2)
	raw := rcptSigned(t, 3, key)
	legacyReceipt := rcptReceipt(t, 3)
	legacyReceipt.Legacy = true
	legacy, err := SignReceipt(legacyReceipt, key)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, _ := MarshalPublicKeyPEM(rcptPub(2))
	edit := func(f func(m map[string]any)) []byte { return editJSON(t, raw, f) }
	cases := map[string]struct {
		raw     []byte
		trusted ed25519.PublicKey
		want    error
		check   string
	}{
		"reordered participants": {edit(func(m map[string]any) {
			ps := m["participating_operators"].([]any)
			ps[0], ps[1] = ps[1], ps[0]
		}), rcptPub(1), ErrMismatch, "participants_order"},
		"changed anchored_at":     {edit(func(m map[string]any) { m["anchored_at"] = "2026-11-21T18:00:01.000000000Z" }), rcptPub(1), ErrMismatch, "cross_anchor_hash"},
		"changed hash":            {edit(func(m map[string]any) { m["cross_anchor_hash"] = caTestHash }), rcptPub(1), ErrMismatch, "cross_anchor_hash"},
		"changed chain_signature": {edit(func(m map[string]any) { rcptParticipant(m, 1)["chain_signature"] = caTestCS1 }), rcptPub(1), ErrMismatch, "cross_anchor_hash"},
		"dropped participant": {edit(func(m map[string]any) {
			m["participating_operators"] = m["participating_operators"].([]any)[1:]
		}), rcptPub(1), ErrMismatch, "cross_anchor_hash"},
		"changed anchor_id":           {edit(func(m map[string]any) { m["anchor_id"] = "anchor-20261121-002" }), rcptPub(1), ErrSignature, "federation_signature"},
		"set tlog_log_index":          {edit(func(m map[string]any) { m["tlog_log_index"] = 7 }), rcptPub(1), ErrMalformed, "parse"},
		"set tlog_url":                {edit(func(m map[string]any) { m["tlog_url"] = "https://log.example" }), rcptPub(1), ErrMalformed, "parse"},
		"set legacy tlog_log_index":   {editJSON(t, legacy, func(m map[string]any) { m["tlog_log_index"] = 7 }), rcptPub(1), ErrSignature, "federation_signature"},
		"set legacy tlog_url":         {editJSON(t, legacy, func(m map[string]any) { m["tlog_url"] = "https://log.example" }), rcptPub(1), ErrSignature, "federation_signature"},
		"dropped tlog_public_key_pem": {edit(func(m map[string]any) { delete(m, "tlog_public_key_pem") }), rcptPub(1), ErrMalformed, "parse"},
		"dropped both log key members": {edit(func(m map[string]any) {
			delete(m, "tlog_public_key_pem")
			delete(m, "tlog_record_public_key_pem")
		}), rcptPub(1), ErrSignature, "federation_signature"},
		"tlog_entry without the log members": {edit(func(m map[string]any) { m["tlog_entry"] = map[string]any{} }), rcptPub(1), ErrMalformed, "parse"},
		"added top-level member":             {edit(func(m map[string]any) { m["note"] = "hi" }), rcptPub(1), ErrSignature, "federation_signature"},
		"added participant member":           {edit(func(m map[string]any) { rcptParticipant(m, 0)["weight"] = 1 }), rcptPub(1), ErrMalformed, "parse"},
		"other key's PEM":                    {edit(func(m map[string]any) { m["federation_public_key_pem"] = string(otherPEM) }), rcptPub(1), ErrSignature, "federation_signature"},
		"re-signed by another key":           {rcptSigned(t, 3, other), rcptPub(1), ErrKeyNotTrusted, "trusted_key"},
		"trusting another key":               {raw, rcptPub(2), ErrKeyNotTrusted, "trusted_key"},
		"no trusted key":                     {raw, nil, ErrNoTrustedKey, "trusted_key"},
		"flipped signature byte":             {rcptFlipSignature(t, raw, 0), rcptPub(1), ErrSignature, "federation_signature"},
		"flipped last signature bit":         {rcptFlipSignature(t, raw, 63), rcptPub(1), ErrSignature, "federation_signature"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rep, err := VerifyReceipt(c.raw, c.trusted)
			if !errors.Is(err, c.want) {
				t.Fatalf("VerifyReceipt: %v, want %v", err, c.want)
			}
			last := rep.Checks[len(rep.Checks)-1]
			if last.Name != c.check || last.OK || last.Skipped {
				t.Errorf("last check %+v, want %s failed", last, c.check)
			}
			var mm *MismatchError
			wantField := map[string]string{"cross_anchor_hash": "cross_anchor_hash", "participants_order": "participating_operators"}[c.check]
			if errors.Is(c.want, ErrMismatch) && (!errors.As(err, &mm) || mm.Field != wantField) {
				t.Errorf("error %v is not a %s *MismatchError", err, wantField)
			}
			if c.trusted == nil && last.Detail != "self-consistent but bound to no trusted key" {
				t.Errorf("detail %q", last.Detail)
			}
		})
	}
}

func rcptFlipSignature(tb testing.TB, raw []byte, i int) []byte {
	return editJSON(tb, raw, func(m map[string]any) {
		sig, _ := base64.StdEncoding.DecodeString(m["federation_signature"].(string))
		sig[i] ^= 0x01
		m["federation_signature"] = base64.StdEncoding.EncodeToString(sig)
	})
}

func TestVerifyReceiptMalformed(t *testing.T) {
	raw := rcptSigned(t, 3, rcptKey(1))
	set := func(member string, v any) []byte {
		return editJSON(t, raw, func(m map[string]any) { m[member] = v })
	}
	setP := func(member string, v any) []byte {
		return editJSON(t, raw, func(m map[string]any) { rcptParticipant(m, 1)[member] = v })
	}
	sorted := string(editJSON(t, raw, func(map[string]any) {}))
	cases := map[string][]byte{
		"truncated":               raw[:len(raw)/2],
		"empty":                   nil,
		"array":                   []byte(`[]`),
		"trailing data":           append(append([]byte{}, raw...), 'x'),
		"two objects":             append(append([]byte{}, raw...), raw...),
		"invalid utf-8":           bytes.Replace(raw, []byte("anchor-"), []byte("anchor\xff"), 1),
		"duplicate member":        []byte(strings.Replace(sorted, "{", `{"anchor_id":"anchor-20261121-001",`, 1)),
		"duplicate dropped":       []byte(strings.Replace(sorted, "{", `{"tlog_entry":{},"tlog_entry":{},`, 1)),
		"63-hex hash":             set("cross_anchor_hash", caTestHash[1:]),
		"uppercase hash":          set("cross_anchor_hash", strings.ToUpper(caTestHash)),
		"bad base64":              set("federation_signature", "!!!!"),
		"short signature":         set("federation_signature", base64.StdEncoding.EncodeToString(make([]byte, 63))),
		"unpadded signature":      set("federation_signature", base64.RawStdEncoding.EncodeToString(make([]byte, 64))),
		"signature with newline":  set("federation_signature", base64.StdEncoding.EncodeToString(make([]byte, 64))[:40]+"\n"+base64.StdEncoding.EncodeToString(make([]byte, 64))[40:]),
		"RSA PEM":                 set("federation_public_key_pem", rcptForeignPEMs()["RSA"]),
		"P-256 PEM":               set("federation_public_key_pem", rcptForeignPEMs()["P-256"]),
		"not PEM":                 set("federation_public_key_pem", "ed25519:abc"),
		"anchor_id number":        set("anchor_id", 5),
		"anchor_id bad date":      set("anchor_id", "anchor-20261321-001"),
		"anchor_id short seq":     set("anchor_id", "anchor-20261121-01"),
		"anchored_at null":        set("anchored_at", nil),
		"anchored_at no fraction": set("anchored_at", "2026-11-21T18:00:00Z"),
		"participants object":     set("participating_operators", map[string]any{}),
		"participants empty":      set("participating_operators", []any{}),
		"participant string":      set("participating_operators", []any{"op_0000000000000001"}),
		"operator_id number":      setP("operator_id", 1),
		"operator_id bad shape":   setP("operator_id", "op_1"),
		"chain_signature 63 hex":  setP("chain_signature", caTestCS1[1:]),
		"tlog_log_index string":   set("tlog_log_index", "1"),
		"tlog_log_index fraction": set("tlog_log_index", json.Number("1.5")),
		"tlog_log_index negative": set("tlog_log_index", -1),
		"tlog_log_index huge":     set("tlog_log_index", json.Number("99999999999999999999")),
		"tlog_url number":         set("tlog_url", 5),
		"signature null":          set("federation_signature", nil),
		"tlog_entry string":       set("tlog_entry", "x"),
		"tlog_entry array":        set("tlog_entry", []any{}),
		"unknown member fraction": set("note", json.Number("0.5")),
	}
	cases["duplicate in participant"] = []byte(strings.Replace(sorted, `"operator_id":`, `"operator_id":"op_0000000000000000","operator_id":`, 1))
	for _, member := range []string{"anchor_id", "anchored_at", "cross_anchor_hash", "participating_operators", "tlog_log_index", "tlog_url", "federation_public_key_pem", "federation_signature"} {
		cases["missing "+member] = editJSON(t, raw, func(m map[string]any) { delete(m, member) })
	}
	cases["participant missing chain_signature"] = editJSON(t, raw, func(m map[string]any) { delete(rcptParticipant(m, 0), "chain_signature") })
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			rep, err := VerifyReceipt(in, rcptPub(1))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("VerifyReceipt: %v, want ErrMalformed", err)
			}
			if len(rep.Checks) != 1 || rep.Checks[0].Name != "parse" || rep.Checks[0].OK || rep.Receipt != nil {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

func TestSignReceiptRefuses(t *testing.T) {
	unsorted := rcptReceipt(t, 3)
	ps := unsorted.ParticipatingOperators
	ps[0], ps[1] = ps[1], ps[0]
	wrongHash := rcptReceipt(t, 3)
	wrongHash.CrossAnchorHash = caTestHash
	cases := map[string]struct {
		r    *Receipt
		key  ed25519.PrivateKey
		want error
	}{
		"unsorted participants": {unsorted, rcptKey(1), ErrMismatch},
		"wrong hash":            {wrongHash, rcptKey(1), ErrMismatch},
		"short key":             {rcptReceipt(t, 3), rcptKey(1)[:32], ErrMalformed},
		"bad tlog_entry":        {&Receipt{TLogEntry: json.RawMessage(`{`)}, rcptKey(1), ErrMalformed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if out, err := SignReceipt(c.r, c.key); !errors.Is(err, c.want) {
				t.Fatalf("SignReceipt = %s, %v; want %v", out, err, c.want)
			}
		})
	}
}

// TestReceiptPayloadLiteral checks the payload of a hand-written receipt against a payload
// written by hand from the receipt form's rules.
func TestReceiptPayloadLiteral(t *testing.T) {
	const pemText = `-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=\n-----END PUBLIC KEY-----\n`
	raw := `{
  "tlog_url": "https://log.example/entries?x=1&y=<2>",
  "participating_operators": [
    { "operator_id": "` + caTestOp1 + `", "chain_signature": "` + caTestCS1 + `" },
    { "chain_signature": "` + caTestCS2 + `", "operator_id": "` + caTestOp2 + `" }
  ],
  "anchored_at": "` + caTestAt + `",
  "federation_signature": "not even base64",
  "anchor_id": "anchor-20261121-001",
  "tlog_entry": { "logIndex": 1.5 },
  "cross_anchor_hash": "` + caTestHash + `",
  "tlog_log_index": 42,
  "note": "caf\u00e9 😀 a\/b",
  "federation_public_key_pem": "` + pemText + `"
}`
	want := `{"anchor_id":"anchor-20261121-001","anchored_at":"2026-11-21T18:00:00.000000000Z",` +
		`"cross_anchor_hash":"d2d80e23ee67a059071c948c17492b45929773646b134b05f057f30171e6bff0",` +
		`"federation_public_key_pem":"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=\n-----END PUBLIC KEY-----\n",` +
		`"note":"caf\u00e9 \ud83d\ude00 a/b",` +
		`"participating_operators":[{"chain_signature":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","operator_id":"op_0000000000000001"},` +
		`{"chain_signature":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","operator_id":"op_00000000000000ff"}],` +
		`"tlog_log_index":42,"tlog_url":"https://log.example/entries?x=1&y=<2>"}`
	got, err := ReceiptPayload([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("payload\n got %s\nwant %s", got, want)
	}
}

func TestReceiptPayloadErrors(t *testing.T) {
	cases := map[string]struct {
		in      string
		invalid bool // also wraps canonical.ErrInvalid: the JSON was read, the receipt form refused it
	}{
		"not an object":      {`[1]`, false},
		"duplicate member":   {`{"a":1,"a":1}`, false},
		"fraction":           {`{"a":1.5}`, true},
		"nested duplicate":   {`{"a":{"b":1,"b":1}}`, false},
		"lone surrogate":     {`{"a":"\ud800"}`, false},
		"trailing data":      {`{} {}`, false},
		"invalid utf-8 drop": {"{\"tlog_entry\":\"\xff\"}", false},
		"empty":              {``, false},
		"trailing comma":     {`{"a":1,}`, false},
		"missing colon":      {`{"a" 1}`, false},
		"missing value":      {`{"a":}`, false},
		"extra brace":        {`{"a":1}}`, false},
		"stray bracket":      {`{"a":]}`, false},
		"unterminated":       {`{"a":"x\"}`, false},
		"two values":         {`{"a":1 2}`, false},
		"bad dropped value":  {`{"tlog_entry":{"x":}}`, false},
		"dropped two values": {`{"federation_signature":"a" "b"}`, false},
		"non-string name":    {`{a:1}`, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReceiptPayload([]byte(c.in))
			if !errors.Is(err, ErrMalformed) || errors.Is(err, canonical.ErrInvalid) != c.invalid {
				t.Fatalf("ReceiptPayload(%s): %v", c.in, err)
			}
		})
	}
}

func TestReceiptPayloadDropsOnlySignatureAndEntry(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"empty":           {" { } ", `{}`},
		"only dropped":    {`{"tlog_entry":{"a":[1.5,{"b":null}]},"federation_signature":"x"}`, `{}`},
		"escaped name":    {`{"tlog\u005fentry":{},"b":[{"c":"}"}]}`, `{"b":[{"c":"}"}]}`},
		"similar names":   {`{"tlog_entry ":1,"Federation_signature":2}`, `{"Federation_signature":2,"tlog_entry ":1}`},
		"nested dropped":  {`{"x":{"federation_signature":"s","tlog_entry":{}}}`, `{"x":{"federation_signature":"s","tlog_entry":{}}}`},
		"strings, braces": {`{ "a" : "{[,]}\"" , "b":[ ] }`, `{"a":"{[,]}\"","b":[]}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReceiptPayload([]byte(c.in))
			if err != nil || string(got) != c.want {
				t.Fatalf("ReceiptPayload(%s) = %s, %v; want %s", c.in, got, err, c.want)
			}
		})
	}
}

func FuzzVerifyReceipt(f *testing.F) {
	raw := rcptSigned(f, 2, rcptKey(1))
	f.Add(raw)
	f.Add(editJSON(f, raw, func(m map[string]any) { m["tlog_entry"] = map[string]any{"a": []any{1, "x"}} }))
	f.Add(editJSON(f, raw, func(m map[string]any) { m["anchor_id"] = "anchor-20261121-002" }))
	f.Add([]byte(`{"anchor_id":1}`))
	// A current-format logged receipt, and a legacy one.
	logged := encodeObject(f, loggedReceipt(f, rcptKey(1), rcptKey(1)))
	f.Add(logged)
	f.Add(testReceipt(f, rcptKey(1)))
	trusted := rcptPub(1)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<16 {
			return
		}
		rep, err := VerifyReceipt(in, trusted)
		if rep == nil || len(rep.Checks) == 0 {
			t.Fatalf("no report: %v", err)
		}
		if err != nil {
			if last := rep.Checks[len(rep.Checks)-1]; last.OK {
				t.Fatalf("error %v but last check %+v passed", err, last)
			}
			return
		}
		for _, c := range rep.Checks {
			if !c.OK && !c.Skipped {
				t.Fatalf("success with check %+v", c)
			}
		}
		if rep.Receipt == nil {
			t.Fatal("success without a receipt")
		}
	})
}

func BenchmarkVerifyReceipt100(b *testing.B) {
	raw := rcptSigned(b, 100, rcptKey(1))
	trusted := rcptPub(1)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := VerifyReceipt(raw, trusted); err != nil {
			b.Fatal(err)
		}
	}
}
