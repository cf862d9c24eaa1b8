package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

// TestCheckEntryAgreesWithVerifyExport tampers with one entry of a chain in ways that
// need no neighbour to detect, and expects CheckEntry to name the same seq and reason as
// VerifyExport does for the same chain.
func TestCheckEntryAgreesWithVerifyExport(t *testing.T) {
	mac := hmac.New(sha256.New, testSecret)
	for name, tamper := range map[string]func(e *Entry){
		"honest": func(*Entry) {},
		"body byte": func(e *Entry) {
			e.CanonicalBody = bytes.Replace(e.CanonicalBody, []byte("openai"), []byte("openAI"), 1)
		},
		"canonical":     func(e *Entry) { e.CanonicalHash = "0" + e.CanonicalHash[1:] },
		"span_name":     func(e *Entry) { e.SpanName += "x" },
		"span_kind":     func(e *Entry) { e.SpanKind = "server" },
		"trace_id":      func(e *Entry) { e.TraceID = "f" + e.TraceID[1:] },
		"span_id":       func(e *Entry) { e.SpanID = "f" + e.SpanID[1:] },
		"timestamp_ns":  func(e *Entry) { e.TimestampNS = "1" + e.TimestampNS },
		"hmac_hash":     func(e *Entry) { e.HMACHash = EntryHMAC(bytes.Repeat([]byte{7}, 32), e.PrevHash, e.CanonicalHash) },
		"malformed hex": func(e *Entry) { e.TraceID = "X" + e.TraceID[1:] },
		"invalid body":  func(e *Entry) { e.CanonicalBody = []byte("{"); e.CanonicalHash = sha256Hex(e.CanonicalBody) },
	} {
		t.Run(name, func(t *testing.T) {
			entries := testChain(t, 3, 64)
			tamper(entries[2]) // the last entry, so no link after it breaks
			got := CheckEntry(entries[2], mac)
			if (got == nil) != (name == "honest") {
				t.Fatalf("CheckEntry: %v", got)
			}
			_, want := VerifyExport(bytes.NewReader(writeExportUnchecked(t, entries)), VerifyOptions{Secret: testSecret})
			var gotE, wantE *EntryError
			switch {
			case want == nil && got == nil:
			case errors.As(got, &gotE) && errors.As(want, &wantE):
				if gotE.Seq != wantE.Seq || gotE.Reason != wantE.Reason {
					t.Errorf("CheckEntry: seq %d %s; VerifyExport: seq %d %s", gotE.Seq, gotE.Reason, wantE.Seq, wantE.Reason)
				}
			default:
				t.Errorf("CheckEntry: %v; VerifyExport: %v", got, want)
			}
		})
	}
}

// writeExportUnchecked writes entries whose shape the writer would refuse by writing the
// export of an honest chain and substituting the last entry's line.
func writeExportUnchecked(tb testing.TB, entries []*Entry) []byte {
	tb.Helper()
	last := entries[len(entries)-1]
	honest := testChain(tb, len(entries), 64)
	export := writeExport(tb, honest, testKey, false)
	return bytes.Replace(export, appendEntryJSON(nil, honest[len(honest)-1]), appendEntryJSON(nil, last), 1)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestEntryCheckerDoesNotAllocate checks an entry that passes, with its HMAC, and
// expects no allocation: a verifier runs it for every row.
func TestEntryCheckerDoesNotAllocate(t *testing.T) {
	e := testChain(t, 1, 64)[0]
	c := NewEntryChecker(hmac.New(sha256.New, testSecret))
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.Check(e); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations a check", allocs)
	}
}
