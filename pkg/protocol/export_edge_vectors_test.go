package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// The export vectors of issue 33's "One verifier": chains imported from the original
// product (docs/PROTOCOL.md §2), and the points where the document was silent (a body
// that is not an object, the nesting limit, a signature of another length than 64).

func init() {
	for name, c := range edgeExportCases {
		exportCases[name] = c
	}
}

// withBody is a chain of three entries whose entry 2 has body instead of its own, with
// its columns kept and the chain re-linked by the holder of the secret.
func withBody(body string) func(tb testing.TB) []byte {
	return func(tb testing.TB) []byte {
		entries := testChain(tb, 3, 16)
		e := entries[1]
		e.CanonicalBody = []byte(body)
		sum := sha256.Sum256(e.CanonicalBody)
		e.CanonicalHash = hex.EncodeToString(sum[:])
		relink(tb, entries, 1)
		return exportSignedBy(tb, entries, testKey)
	}
}

// nestedBody is a one-entry export whose body nests objects and arrays levels deep, the body
// object counted as level 1 and its attributes object as level 2.
func nestedBody(levels int) func(tb testing.TB) []byte {
	return func(tb testing.TB) []byte {
		body := testBody(1, 4)
		body.Attributes = map[string]any{"deep": "x"}
		e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
		if err != nil {
			tb.Fatal(err)
		}
		arrays := levels - 2
		e.CanonicalBody = bytes.Replace(e.CanonicalBody, []byte(`"deep":"x"`),
			[]byte(`"deep":`+strings.Repeat("[", arrays)+`"x"`+strings.Repeat("]", arrays)), 1)
		sum := sha256.Sum256(e.CanonicalBody)
		e.CanonicalHash = hex.EncodeToString(sum[:])
		entries := []*Entry{e}
		relink(tb, entries, 0)
		return exportSignedBy(tb, entries, testKey)
	}
}

// all is the same verdict in every trust mode.
func all(desc string, export func(testing.TB) []byte, verdict string) exportCase {
	return exportCase{desc: desc, export: export, secret: verdict, public: verdict, both: verdict}
}

var edgeExportCases = map[string]exportCase{
	"imported-valid": all("an honest chain imported from the original product: the bridge record at seq 1, five legacy rows behind it (legacy seqs 1-5, sealed with the same secret), then two entries of Cairn's own",
		func(tb testing.TB) []byte { es, _ := importedChain(tb, 5, 2); return exportSignedBy(tb, es, testKey) }, "ok"),
	"imported-ends-inside-the-import": all("the first four entries of that chain: the bridge and three of its five imported rows, whose columns cannot be checked (with the secret alone entries_root is then not authenticated)",
		func(tb testing.TB) []byte {
			es, _ := importedChain(tb, 5, 2)
			return exportSignedBy(tb, es[:4], testKey)
		}, "ok"),
	"imported-body-without-bridge": all("a chain with no bridge record in which the holder of the secret sealed a body with neither trace_id nor span_id at seq 3: its columns would be bound to nothing",
		func(tb testing.TB) []byte {
			es := testChain(tb, 4, 16)
			es[2] = legacyEntry(1)
			es[2].SpanName = "anything at all"
			relink(tb, es, 2)
			return exportSignedBy(tb, es, testKey)
		}, "bridge_mismatch seq 3"),
	"imported-column-rewritten-resigned": all("an imported row's span_name rewritten, entries_root recomputed and the envelope re-signed with another key: the HMACs do not cover columns, the bridge's legacy_rows_sha256 does",
		func(tb testing.TB) []byte {
			es, _ := importedChain(tb, 5, 2)
			es[3].SpanName = "chat gpt-4o"
			return exportSignedBy(tb, es, otherKey)
		}, "bridge_mismatch seq 1"),
	"imported-window-without-bridge": all("a window of the imported chain from seq 3: it cannot show the bridge record that imports its legacy rows",
		func(tb testing.TB) []byte {
			es, _ := importedChain(tb, 5, 2)
			return exportSignedBy(tb, es[2:], testKey)
		}, "bridge_mismatch seq 3"),
	"imported-forged-bridge": all("entry 1 named cairn.import.bijotel whose trace_id is not the first 32 hex digits of its legacy_rows_sha256",
		func(tb testing.TB) []byte {
			es, b := importedChain(tb, 3, 1)
			body := b.Body(importTime)
			body.TraceID = strings.Repeat("1", 32)
			e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
			if err != nil {
				tb.Fatal(err)
			}
			es[0] = e
			relink(tb, es, 1)
			return exportSignedBy(tb, es, testKey)
		}, "bridge_mismatch seq 1"),
	"body-array": all("entry 2's body is [], which is its own RFC 8785 form but not a JSON object",
		withBody(`[]`), "non_canonical_body seq 2"),
	"body-empty-object": all("entry 2's body is {}: an object with neither trace_id nor span_id is an imported body, and no bridge imports it",
		withBody(`{}`), "bridge_mismatch seq 2"),
	"body-nested-513": all("a body whose attributes nest arrays down to level 513, the body object counted as level 1: the deepest a body may nest",
		nestedBody(513), "ok"),
	"body-nested-514": all("the same body one level deeper, at level 514",
		nestedBody(514), "non_canonical_body seq 1"),
	"signature-63-bytes": all("the envelope's value the canonical base64 of 63 bytes, in an export whose entry 2 also fails its body hash: a signature of another length than 64 is malformed (step 0), and malformed wins",
		func(tb testing.TB) []byte {
			return envelopeEdited(tb, true, func(sig *EnvelopeSignature) { sig.Value = base64.StdEncoding.EncodeToString(make([]byte, 63)) })
		}, "malformed"),
}
