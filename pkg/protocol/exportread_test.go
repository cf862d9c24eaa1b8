package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// readerBuffer is the ExportReader's read buffer size: strings longer than this arrive
// in more than one chunk.
const readerBuffer = 64 << 10

// exportOfName is an honest export of one entry whose span is called name.
func exportOfName(tb testing.TB, name string) []byte {
	tb.Helper()
	body := testBody(1, 16)
	body.Name = name
	e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
	if err != nil {
		tb.Fatal(err)
	}
	return writeExport(tb, []*Entry{e}, testKey, false)
}

// spanNameInExport is the span_name encoding/json reads from the export's only entry.
func spanNameInExport(tb testing.TB, export []byte) string {
	tb.Helper()
	var x struct {
		Entries []struct {
			SpanName string `json:"span_name"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(export, &x); err != nil || len(x.Entries) != 1 {
		tb.Fatalf("encoding/json reads the export: %v", err)
	}
	return x.Entries[0].SpanName
}

// TestLongStringEscapesAcrossReadChunks is issue 14's hole 2: a string longer than the
// reader's buffer whose escapes sit in a chunk before the closing quote.
func TestLongStringEscapesAcrossReadChunks(t *testing.T) {
	tail := strings.Repeat("x", 3*readerBuffer)
	cases := map[string]struct {
		export func(tb testing.TB) []byte
		want   string // verdict in every trust mode
	}{
		"honest escape in the first chunk": {
			export: func(tb testing.TB) []byte { return exportOfName(tb, "line\none\ttab "+tail) },
			want:   "ok",
		},
		"honest escape in a middle chunk": {
			export: func(tb testing.TB) []byte {
				return exportOfName(tb, tail[:readerBuffer+7]+"\\\u0001"+tail)
			},
			want: "ok",
		},
		"honest 2 MiB name full of escapes": {
			export: func(tb testing.TB) []byte {
				// Escapes without a quote among them, then 100 KiB without any, 20 times over.
				part := "a\\b\nc\u0007é\u2028" + strings.Repeat("y", 100<<10)
				return exportOfName(tb, strings.Repeat(part, 20))
			},
			want: "ok",
		},
		"edited escape in the first chunk": {
			// The name holds a literal backslash; the forger deletes the backslash that
			// escapes it, so the column now spells "aA…" to any JSON reader, while the body,
			// the leaf and so entries_root still say `a\u0041…`.
			export: func(tb testing.TB) []byte {
				honest := exportOfName(tb, `a\u0041`+tail)
				forged := bytes.Replace(honest, []byte(`"span_name":"a\\u0041`), []byte(`"span_name":"a\u0041`), 1)
				if bytes.Equal(forged, honest) {
					tb.Fatal("edit did not apply")
				}
				if got := spanNameInExport(tb, forged); got != "aA"+tail {
					tb.Fatalf("encoding/json reads span_name %.10q…", got)
				}
				return forged
			},
			want: "column_mismatch seq 1",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			export := c.export(t)
			for mode, opts := range exportModes() {
				_, err := VerifyExport(bytes.NewReader(export), opts)
				if got := verdict(err); got != c.want {
					t.Errorf("%s: verdict %q, want %q (error: %.200v)", mode, got, c.want, err)
				}
			}
		})
	}
}

// TestPrettyPrintedExportVerifies is issue 14's hole 3: whitespace is allowed wherever
// JSON allows it, so an export re-indented as `jq .` writes it still verifies.
func TestPrettyPrintedExportVerifies(t *testing.T) {
	honest := writeExport(t, testChain(t, 5, 64), testKey, false)
	headerOnly := writeExport(t, testChain(t, 5, 64), testKey, true)
	indent := func(tb testing.TB, src []byte, indent string) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, src, "", indent); err != nil {
			tb.Fatal(err)
		}
		return b.Bytes()
	}
	cases := map[string][]byte{
		"jq style":             indent(t, honest, "  "),
		"tabs and CRLF":        bytes.ReplaceAll(indent(t, honest, "\t"), []byte("\n"), []byte("\r\n")),
		"header-only jq style": indent(t, headerOnly, "  "),
		"spaces around colons and commas": bytes.ReplaceAll(bytes.ReplaceAll(
			bytes.ReplaceAll(indent(t, honest, ""), []byte("\n"), nil),
			[]byte(`":`), []byte(`" : `)), []byte(`,"`), []byte(` , "`)),
	}
	for name, export := range cases {
		t.Run(name, func(t *testing.T) {
			for mode, opts := range exportModes() {
				if _, err := VerifyExport(bytes.NewReader(export), opts); err != nil {
					t.Errorf("%s: %v", mode, err)
				}
			}
		})
	}
}
