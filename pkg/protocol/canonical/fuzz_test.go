package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// maxFuzzInput keeps each fuzz iteration cheap.
const maxFuzzInput = 4096

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		rfcExampleIn, rfcExampleOut, rfcSortIn, rfcSortOut,
		`{"b":"é","a":[1,-0,null]}`, `"😀"`, `"a\/b"`, "\"\x7f\"",
		`9007199254740991`, `9007199254740992`, `1e21`, `5e-324`, `-0.0`, `1e400`,
		`{"a":1,"a":2}`, `{"a":1}x`, "\"\xff\"", `"\ud800"`, `[[[]]]`, ``,
	} {
		f.Add([]byte(s))
	}
}

// checkForm checks, for an input the form accepted, that the output is valid JSON, is its
// own form, and decodes to the same value as the input.
func checkForm(t *testing.T, form func([]byte) ([]byte, error), in, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON: %q", out)
	}
	again, err := form(out)
	if err != nil {
		t.Fatalf("output %q refused: %v", out, err)
	}
	if !bytes.Equal(again, out) {
		t.Fatalf("not idempotent: %q then %q", out, again)
	}
	var vin, vout any
	if err := json.Unmarshal(in, &vin); err != nil {
		return // e.g. an integer too large for float64; encoding/json cannot compare it
	}
	if err := json.Unmarshal(out, &vout); err != nil {
		t.Fatalf("encoding/json refuses output %q: %v", out, err)
	}
	if !reflect.DeepEqual(vin, vout) {
		t.Fatalf("value changed: %q decodes to %#v, output %q to %#v", in, vin, out, vout)
	}
}

func FuzzTransform(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxFuzzInput {
			return
		}
		out, err := Transform(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		checkForm(t, Transform, in, out)
	})
}

func FuzzReceiptForm(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxFuzzInput {
			return
		}
		out, err := ReceiptForm(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		for _, c := range out {
			if c >= 0x7f {
				t.Fatalf("output has a non-ASCII or DEL byte: %q", out)
			}
		}
		checkForm(t, ReceiptForm, in, out)
	})
}

// benchObject is a JSON object of about 1 KB with the mix of members Cairn signs.
const benchObject = `{
  "anchor_id": "anchor-20261121-004",
  "anchored_at": "2026-11-21T18:00:00.000000000Z",
  "cross_anchor_hash": "9f2c4b1e0d3a5f6789abcdef0123456789abcdef0123456789abcdef01234567",
  "participating_operators": [
    {"operator_id": "op_0a1b2c3d4e5f6071", "chain_signature": "1111111111111111111111111111111111111111111111111111111111111111"},
    {"operator_id": "op_1a1b2c3d4e5f6071", "chain_signature": "2222222222222222222222222222222222222222222222222222222222222222"},
    {"operator_id": "op_2a1b2c3d4e5f6071", "chain_signature": "3333333333333333333333333333333333333333333333333333333333333333"}
  ],
  "tlog_log_index": 123456789,
  "tlog_url": "https:\/\/log.example\/api\/v1\/log\/entries",
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, -0.0, 1e-7],
  "note": "caf\u00e9 \ud83d\ude00 \u20ac tab\there",
  "flags": {"z": true, "a": false, "m": null, "\u00f6": [], "\ufb33": {}},
  "federation_signature": "c2lnbmF0dXJlIGJ5dGVzIGdvIGhlcmUgYW5kIGFyZSBiYXNlNjQgZW5jb2RlZCBmb3IgdGhlIGJlbmNobWFyaw=="
}`

func BenchmarkTransform(b *testing.B) {
	in := []byte(benchObject)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transform(in); err != nil {
			b.Fatal(err)
		}
	}
}
