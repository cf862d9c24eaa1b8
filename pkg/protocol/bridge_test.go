package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

func testBridge() *Bridge {
	return &Bridge{
		LegacyFirstSeq: 41, LegacyLastSeq: 140, LegacyRows: 100,
		LegacyFirstPrevHash: strings.Repeat("a", 64), LegacyHeadHMACHash: strings.Repeat("b", 64),
		LegacyExportSHA256: strings.Repeat("c", 64), LegacyExportCreatedAt: "2026-11-26T10:00:00+00:00",
		LegacyRowsSHA256: strings.Repeat("d", 64), FirstSeq: 2, LastSeq: 101,
	}
}

func sealBridge(t *testing.T, b *Bridge, seq int64) *Entry {
	t.Helper()
	e, err := NewEntry(testSecret, seq, GenesisPrevHash, b.Body(time.Unix(1790000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if kind, err := CheckEntryBody(e, nil); err != nil || kind != BodySpan {
		t.Fatalf("bridge entry: %v, kind %d", err, kind)
	}
	return e
}

func TestBridgeRoundTrip(t *testing.T) {
	b := testBridge()
	got, err := ParseBridge(sealBridge(t, b, 1))
	if err != nil || got == nil || *got != *b {
		t.Fatalf("ParseBridge = %+v, %v; want %+v", got, err, b)
	}
	if !got.Holds(2) || !got.Holds(101) || got.Holds(1) || got.Holds(102) || got.LegacySeq(2) != 41 || got.LegacySeq(101) != 140 {
		t.Fatalf("Holds/LegacySeq wrong for %+v", got)
	}
	other, err := NewEntry(testSecret, 1, GenesisPrevHash, SpanBody{Name: "chat", TraceID: strings.Repeat("1", 32), SpanID: strings.Repeat("2", 16)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseBridge(other); got != nil || err != nil {
		t.Fatalf("a span that is not a bridge: %+v, %v", got, err)
	}
}

func TestParseBridgeRefusesInconsistentRecords(t *testing.T) {
	for name, edit := range map[string]func(b *Bridge){
		"rows do not fill the legacy seqs": func(b *Bridge) { b.LegacyRows = 99 },
		"imported seqs do not follow it":   func(b *Bridge) { b.FirstSeq, b.LastSeq = 3, 102 },
		"imported seqs too few":            func(b *Bridge) { b.LastSeq = 100 },
		"no legacy rows":                   func(b *Bridge) { b.LegacyRows, b.LegacyLastSeq, b.LastSeq = 0, 40, 1 },
		"a hash not hex":                   func(b *Bridge) { b.LegacyHeadHMACHash = strings.Repeat("B", 64) },
		"export time not RFC 3339":         func(b *Bridge) { b.LegacyExportCreatedAt = "yesterday" },
	} {
		t.Run(name, func(t *testing.T) {
			b := testBridge()
			edit(b)
			if _, err := ParseBridge(sealBridge(t, b, 1)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	t.Run("not at seq 1", func(t *testing.T) {
		if _, err := ParseBridge(sealBridge(t, testBridge(), 2)); err == nil {
			t.Fatal("accepted")
		}
	})
	t.Run("an attribute missing", func(t *testing.T) {
		body := testBridge().Body(time.Unix(1790000000, 0))
		delete(body.Attributes, "cairn.import.legacy_rows_sha256")
		e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseBridge(e); err == nil {
			t.Fatal("accepted")
		}
	})
}

// A body without trace_id and span_id is an imported body: its columns are not compared
// with it (the bridge binds them), but its hash and HMAC are checked as any other.
func TestImportedBodyKind(t *testing.T) {
	body := []byte(`{"attributes":{},"end_time_ns":"2","kind":null,"name":"x","start_time_ns":"1","status_code":"UNSET","status_description":null}`)
	e := &Entry{Seq: 1, TimestampNS: "2", TraceID: strings.Repeat("0", 32), SpanID: strings.Repeat("0", 16),
		SpanName: "anything", CanonicalBody: body, CanonicalHash: hexSHA256(body), PrevHash: GenesisPrevHash}
	e.HMACHash = EntryHMAC(testSecret, e.PrevHash, e.CanonicalHash)
	mac := hmac.New(sha256.New, testSecret)
	if kind, err := CheckEntryBody(e, mac); err != nil || kind != BodyImported {
		t.Fatalf("kind %d, %v; want BodyImported", kind, err)
	}
	e.HMACHash = EntryHMAC(bytes.Repeat([]byte{1}, 32), e.PrevHash, e.CanonicalHash)
	if _, err := CheckEntryBody(e, mac); err == nil {
		t.Fatal("an imported body's HMAC is not checked")
	}
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
