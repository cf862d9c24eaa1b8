package protocol

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
)

// canonicalBodyTemplate is the canonical body of a span named "chat", with ATTRS standing
// for its attributes object and NAME for its name.
const canonicalBodyTemplate = `{"attributes":ATTRS,"end_time_ns":"2","kind":"client","name":"NAME","span_id":"00f067aa0ba902b7",` +
	`"start_time_ns":"1","status_code":"","status_description":"","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`

func bodyOf(attrs string) []byte {
	return []byte(strings.NewReplacer("ATTRS", attrs, "NAME", "chat").Replace(canonicalBodyTemplate))
}

// sealedExport is what an operator holding both the secret and the key would export if
// its sealer wrote body, whatever its bytes: hash, HMAC, root, chain_signature and
// envelope all agree with it.
func sealedExport(tb testing.TB, body []byte) []byte {
	tb.Helper()
	s, err := NewEntrySealer(testSecret)
	if err != nil {
		tb.Fatal(err)
	}
	e := &Entry{TimestampNS: "1", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7",
		SpanName: "chat", SpanKind: "client", CanonicalBody: body, CanonicalHash: sha256Hex(body)}
	s.Link(e, 1, GenesisPrevHash)
	h := &ExportHeader{Format: ExportFormat, Version: ExportVersion, ExportedAt: testTime.Format("2006-01-02T15:04:05Z"),
		EntryCount: 1, FirstSeq: 1, LastSeq: 1, FirstPrevHash: GenesisPrevHash, LastHMACHash: e.HMACHash,
		ChainSignature: ChainSignature(testSecret, e.HMACHash, 1), EntriesRoot: rootOf([]*Entry{e})}
	b := appendEntryJSON(append([]byte(`{"entries":[`), '\n'), e)
	b, err = appendSignedHeader(append(b, "\n],"...), h, testKey)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestNonCanonicalBodiesAreRefused is hole 9 of issue 14: a body must be its own RFC 8785
// form. Each body below is sealed consistently (hash, HMAC, root, signature), as a
// sealer that wrote it would; verification must still refuse it, in every trust mode.
func TestNonCanonicalBodiesAreRefused(t *testing.T) {
	honest, err := SpanBody{Name: "chat", Kind: "client", StartTimeNS: 1, EndTimeNS: 2,
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7", Attributes: map[string]any{"a": int64(1)}}.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if want := bodyOf(`{"a":1}`); !bytes.Equal(honest, want) {
		t.Fatalf("the template is not what the sealer writes:\n got %s\nwant %s", honest, want)
	}
	cases := map[string][]byte{
		"duplicate attribute":         bodyOf(`{"a":1,"a":2}`),
		"duplicate top-level member":  bytes.Replace(bodyOf(`{}`), []byte(`"status_code":""`), []byte(`"status_code":"","status_code":"x"`), 1),
		"invalid UTF-8":               bodyOf(`{"a":"` + "\xff" + `"}`),
		"lone surrogate escape":       bodyOf(`{"a":"\ud800"}`),
		"1e400":                       bodyOf(`{"a":1e400}`),
		"1.0":                         bodyOf(`{"a":1.0}`),
		"1E2":                         bodyOf(`{"a":1E2}`),
		"-0":                          bodyOf(`{"a":-0}`),
		"2^53":                        bodyOf(`{"a":9007199254740992}`),
		"keys out of order":           bodyOf(`{"b":1,"a":2}`),
		"top-level keys out of order": append([]byte(`{"name":"chat",`), bytes.Replace(bodyOf(`{}`), []byte(`"name":"chat",`), nil, 1)[1:]...),
		"whitespace":                  append([]byte("{ "), bodyOf(`{}`)[1:]...),
		"trailing newline":            append(bodyOf(`{}`), '\n'),
		"needless escape":             bodyOf(`{"a":"\u0041"}`),
		"escaped slash":               bodyOf(`{"a":"\/"}`),
		"uppercase hex escape":        bodyOf(`{"a":"\u001F"}`),
		"long form of a short escape": bodyOf(`{"a":"\u000a"}`),
	}
	pub := testKey.Public().(ed25519.PublicKey)
	for name, body := range cases {
		export := sealedExport(t, body)
		for mode, opts := range map[string]VerifyOptions{"secret": {Secret: testSecret}, "public_key": {PublicKey: pub}, "both": {Secret: testSecret, PublicKey: pub}} {
			_, err := VerifyExport(bytes.NewReader(export), opts)
			if got := verdict(err); got != "non_canonical_body seq 1" {
				t.Errorf("%s/%s: verdict %q, want non_canonical_body seq 1 (%v)\nbody %q", name, mode, got, err, body)
			}
		}
	}
	// Canonical bodies pass, including escapes RFC 8785 writes and numbers it keeps.
	for _, attrs := range []string{`{}`, `{"a":1}`, `{"a":"\n\u001f\"\\"}`, `{"a":1.5,"b":1e+21,"c":-2,"d":0.002}`, `{"\u0001":1,"a":[true,false,null,{}]}`} {
		if _, err := VerifyExport(bytes.NewReader(sealedExport(t, bodyOf(attrs))), VerifyOptions{Secret: testSecret, PublicKey: pub}); err != nil {
			t.Errorf("canonical attributes %s: %v", attrs, err)
		}
	}
}
