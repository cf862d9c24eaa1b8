package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"testing"
)

// This file holds issue 14's hole 10 for exports: inputs on which an implementation
// written from docs/PROTOCOL.md alone disagreed with the binary. Each is crafted by the
// holder of the secret and the key, so hash, HMAC, root, chain_signature and envelope all
// agree with what the old reader read: only the reading rules decide the verdict, which
// §3 and §9 predict.

func init() {
	for name, c := range craftedExportCases {
		exportCases[name] = c
	}
}

// craftedExport is an export of the entries chain returns, with a header the secret and
// key holder made consistent with them and changed by header (if not nil), signed with
// testKey; then its bytes are changed by edit (if not nil), which may only respell what
// a reader must read as the same.
func craftedExport(chain func(tb testing.TB) []*Entry, header func(*ExportHeader), edit func(tb testing.TB, export []byte) []byte) func(testing.TB) []byte {
	return func(tb testing.TB) []byte {
		entries := chain(tb)
		first, last := entries[0], entries[len(entries)-1]
		h := &ExportHeader{Format: ExportFormat, Version: ExportVersion, ExportedAt: testTime.Format("2006-01-02T15:04:05Z"),
			EntryCount: last.Seq, FirstSeq: first.Seq, LastSeq: last.Seq, FirstPrevHash: first.PrevHash, LastHMACHash: last.HMACHash,
			ChainSignature: ChainSignature(testSecret, last.HMACHash, last.Seq), EntriesRoot: rootOf(entries)}
		if header != nil {
			header(h)
		}
		b := []byte(`{"entries":[`)
		for i, e := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEntryJSON(append(b, '\n'), e)
		}
		b, err := appendSignedHeader(append(b, "\n],"...), h, testKey)
		if err != nil {
			tb.Fatal(err)
		}
		if edit != nil {
			b = edit(tb, b)
		}
		return b
	}
}

// namedChain is an honest chain of three entries whose first span is called name.
func namedChain(name string) func(testing.TB) []*Entry {
	return func(tb testing.TB) []*Entry {
		es := testChain(tb, 3, 16)
		body := testBody(1, 16)
		body.Name = name
		e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
		if err != nil {
			tb.Fatal(err)
		}
		es[0] = e
		s, _ := NewEntrySealer(testSecret)
		s.Link(es[1], 2, e.HMACHash)
		s.Link(es[2], 3, es[1].HMACHash)
		return es
	}
}

// replaceOnce replaces the one occurrence of old in export, failing if there is none.
func replaceOnce(tb testing.TB, export []byte, old, new string) []byte {
	tb.Helper()
	if bytes.Count(export, []byte(old)) != 1 {
		tb.Fatalf("%q occurs %d times in the export, want once", old, bytes.Count(export, []byte(old)))
	}
	return bytes.Replace(export, []byte(old), []byte(new), 1)
}

// headerFirst moves the header members before entries, where §3 allows them.
func headerFirst(tb testing.TB, export []byte) []byte {
	tb.Helper()
	cut := bytes.Index(export, []byte("\n],"))
	if cut < 0 {
		tb.Fatal("no end of entries")
	}
	entries, header := export[len(`{`):cut+len("\n]")], export[cut+len("\n],"):len(export)-len("}\n")]
	return append(append(append(append([]byte(`{`), header...), ','), entries...), "}\n"...)
}

func sealedBody(attrs string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return sealedExport(tb, bodyOf(attrs)) }
}

func chain3(tb testing.TB) []*Entry { return testChain(tb, 3, 16) }

// flippedChain is chain3 with one byte of entry 2's body changed and nothing recomputed.
func flippedChain(tb testing.TB) []*Entry {
	es := chain3(tb)
	es[1].CanonicalBody = bytes.Replace(es[1].CanonicalBody, []byte("openai"), []byte("openAI"), 1)
	return es
}

// every is one verdict for all three trust modes.
func every(desc string, export func(testing.TB) []byte, verdict string) exportCase {
	return exportCase{desc: desc, export: export, secret: verdict, public: verdict, both: verdict}
}

// craftedExportCases are hole 10's export vectors. The old binary's verdict, where it
// differed, is in docs/SECURITY.md ("Hole 10: exports and the reader").
var craftedExportCases = map[string]exportCase{
	"crafted-lone-surrogate-span-name": every(
		"span_name written \"x\\ud800\" (a lone surrogate escape) with the body's name, the leaf and entries_root all made over U+FFFD, as a reader that substitutes it reads it: §1 refuses lone surrogates",
		craftedExport(namedChain("x\uFFFD"), nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, "\"span_name\":\"x\uFFFD\"", `"span_name":"x\ud800"`)
		}), "malformed"),
	"crafted-invalid-utf8-span-name": every(
		"span_name written with an escape and the invalid UTF-8 byte 0xff, the body and the root made over U+FFFD: §1 refuses invalid UTF-8",
		craftedExport(namedChain("a\tb\uFFFD"), nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, "\"span_name\":\"a\\tb\uFFFD\"", "\"span_name\":\"a\\tb\xff\"")
		}), "malformed"),
	"crafted-body-lone-surrogate": every("the body holds the escape \\ud800, sealed consistently: not RFC 8785 (§2)",
		sealedBody(`{"a":"\ud800"}`), "non_canonical_body seq 1"),
	"crafted-body-invalid-utf8": every("the body holds the byte 0xff in a string, sealed consistently: not RFC 8785 (§2)",
		sealedBody("{\"a\":\"\xff\"}"), "non_canonical_body seq 1"),
	"crafted-pretty-printed": every("the honest export re-indented by jq . : whitespace after every ':' including an entry's seq (§3)",
		func(tb testing.TB) []byte {
			var out bytes.Buffer
			if err := json.Indent(&out, craftedExport(chain3, nil, nil)(tb), "", "  "); err != nil {
				tb.Fatal(err)
			}
			return out.Bytes()
		}, "ok"),
	"crafted-seq-whitespace": every("an entry's seq written \"seq\" :\\t 2 (§3: whitespace wherever JSON allows it)",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte { return replaceOnce(tb, b, `"seq":2`, "\"seq\" :\t 2") }), "ok"),
	"crafted-timestamp-escape": every("timestamp_ns written with an escape (\\u0031 for its first digit): §3 allows escapes only in span_name, span_kind and the PEM",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, `"timestamp_ns":"1795262402`, `"timestamp_ns":"\u0031795262402`)
		}), "malformed"),
	"crafted-timestamp-leading-zero": every("timestamp_ns and the body's start_time_ns both 0-prefixed, sealed consistently: not a decimal integer (§3)",
		craftedExport(func(tb testing.TB) []*Entry {
			es := chain3(tb)
			body := testBody(1, 16)
			e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
			if err != nil {
				tb.Fatal(err)
			}
			e.CanonicalBody = bytes.Replace(e.CanonicalBody, []byte(`"start_time_ns":"`), []byte(`"start_time_ns":"0`), 1)
			e.TimestampNS = "0" + e.TimestampNS
			e.CanonicalHash = sha256Hex(e.CanonicalBody)
			s, _ := NewEntrySealer(testSecret)
			s.Link(e, 1, GenesisPrevHash)
			s.Link(es[1], 2, e.HMACHash)
			s.Link(es[2], 3, es[1].HMACHash)
			es[0] = e
			return es
		}, nil, nil), "malformed_entry seq 1"),
	"crafted-number-1e400": every("a body attribute 1e400, sealed consistently (§1: overflows a double)", sealedBody(`{"a":1e400}`), "non_canonical_body seq 1"),
	"crafted-number-1e21":  every("a body attribute 1e21, sealed consistently (§1: RFC 8785 writes it 1e+21)", sealedBody(`{"a":1e21}`), "non_canonical_body seq 1"),
	"crafted-number-1e+21": every("a body attribute 1e+21, sealed consistently (§1: a double at or above 1e21, as RFC 8785 writes it)", sealedBody(`{"a":1e+21}`), "ok"),
	"crafted-number-1e23-literal": every("a body attribute 100000000000000000000000, an integer literal beyond 2^53-1 (§1: refused, it would be rounded)",
		sealedBody(`{"a":100000000000000000000000}`), "non_canonical_body seq 1"),
	"crafted-entry-count-exponent": every("entry_count written 3e0, the envelope signed over the value 3: §3's integers are digits only",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, `"entry_count":3`, `"entry_count":3e0`)
		}), "malformed"),
	"crafted-header-first-malformed-then-bad-entry": every("header members first, exported_at not RFC 3339, then entry 2 with a flipped body byte: a malformed export is malformed wherever the fault lies (§3 check order)",
		craftedExport(flippedChain, func(h *ExportHeader) { h.ExportedAt = "yesterday" }, headerFirst), "malformed"),
	"crafted-bad-entry-then-malformed-header": every("entry 2's body byte flipped, then a header whose exported_at is not RFC 3339: malformed wins (§3 check order)",
		craftedExport(flippedChain, func(h *ExportHeader) { h.ExportedAt = "yesterday" }, nil), "malformed"),
	"crafted-bad-entry-then-trailing-data": every("entry 2's body byte flipped, and data after the export object: malformed wins (§3 check order)",
		craftedExport(flippedChain, nil, func(_ testing.TB, b []byte) []byte { return append(b, "{}"...) }), "malformed"),
	"crafted-entry-count-above-last-seq": every("entry_count 4 with last_seq 3, chain_signature and envelope made over 4: §3 requires entry_count = last_seq",
		craftedExport(chain3, func(h *ExportHeader) {
			h.EntryCount = 4
			h.ChainSignature = ChainSignature(testSecret, h.LastHMACHash, 4)
		}, nil), "malformed"),
	"crafted-empty-entries": every("an entries member that is an empty array with an honest header: §9's mismatch entries",
		craftedExport(chain3, nil, func(_ testing.TB, b []byte) []byte {
			end := bytes.Index(b, []byte("\n],"))
			return append([]byte(`{"entries":[`), b[end+1:]...)
		}), "mismatch entries"),
	"crafted-signature-duplicate-member": every("the signature object repeats algorithm (\"RSA\" first): §1 and §3 refuse repeated member names",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, `"signature":{"algorithm":"Ed25519"`, `"signature":{"algorithm":"RSA","algorithm":"Ed25519"`)
		}), "malformed"),
	"crafted-signature-member-case": every("the signature's members spelled Algorithm, Public_Key and VALUE: member names are case-sensitive (§3)",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte {
			b = replaceOnce(tb, b, `"algorithm":`, `"Algorithm":`)
			b = replaceOnce(tb, b, `"public_key":`, `"Public_Key":`)
			return replaceOnce(tb, b, `"value":`, `"VALUE":`)
		}), "malformed"),
	"crafted-header-escape": every("format written cairn\\u002dchain-v2: §3 allows escapes only in span_name, span_kind and the PEM",
		craftedExport(chain3, nil, func(tb testing.TB, b []byte) []byte {
			return replaceOnce(tb, b, `"format":"cairn-chain-v2"`, `"format":"cairn\u002dchain-v2"`)
		}), "malformed"),
}

// TestCraftedExportsAreHonestOtherwise checks that the crafted exports differ from an
// honest one only where they say: each edited one verifies when the edit is a respelling
// a reader must accept, and the signer's key is the trusted one.
func TestCraftedExportsAreHonestOtherwise(t *testing.T) {
	pub := testKey.Public().(ed25519.PublicKey)
	for _, name := range []string{"crafted-pretty-printed", "crafted-seq-whitespace", "crafted-number-1e+21"} {
		if _, err := VerifyExport(bytes.NewReader(craftedExportCases[name].export(t)), VerifyOptions{Secret: testSecret, PublicKey: pub}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Every edit leaves JSON that encoding/json accepts (but for the data after the
	// object), so each verdict is decided by the rule the case names, not by a broken
	// splice.
	for name, c := range craftedExportCases {
		if export := c.export(t); !json.Valid(export) && name != "crafted-bad-entry-then-trailing-data" {
			t.Errorf("%s: the crafted export is not JSON encoding/json accepts", name)
		}
	}
	honest := craftedExport(chain3, nil, nil)(t)
	if _, err := VerifyExport(bytes.NewReader(honest), VerifyOptions{Secret: testSecret, PublicKey: pub}); err != nil {
		t.Fatalf("the unedited crafted export: %v", err)
	}
}
