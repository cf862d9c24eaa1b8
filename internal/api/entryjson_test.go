package api

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// headOf and hashesOf are what appendHeadJSON and appendHashesJSON must write, built the
// plain way.
func headOf(seq int64, timestampNS, traceID, spanID, spanName, spanKind string) entryHead {
	h := entryHead{Seq: seq, TimestampNSStr: timestampNS, TraceID: traceID, SpanID: spanID, SpanName: spanName, SpanKind: spanKind}
	if ns, err := strconv.ParseInt(timestampNS, 10, 64); err == nil {
		h.TimestampNS = &ns
		h.Time = time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	return h
}

// summaryViewOf is what appendSummaryJSON must write, built the plain way.
func summaryViewOf(sum *store.Summary) entrySummary {
	return entrySummary{entryHead: headOf(sum.Seq, sum.TimestampNS, sum.TraceID, sum.SpanID, sum.SpanName, sum.SpanKind),
		BodyBytes:   sum.BodyBytes,
		entryHashes: entryHashes{CanonicalHash: sum.CanonicalHash, PrevHash: sum.PrevHash, HMACHash: sum.HMACHash}}
}

// entryDetailOf is what appendEntryJSON must write, built the plain way.
func entryDetailOf(e *protocol.Entry) entryDetail {
	d := entryDetail{entryHead: headOf(e.Seq, e.TimestampNS, e.TraceID, e.SpanID, e.SpanName, e.SpanKind),
		CanonicalBodyB64: e.CanonicalBody,
		entryHashes:      entryHashes{CanonicalHash: e.CanonicalHash, PrevHash: e.PrevHash, HMACHash: e.HMACHash},
		Body:             json.RawMessage("null")}
	if utf8.Valid(e.CanonicalBody) && json.Valid(e.CanonicalBody) {
		d.Body = e.CanonicalBody
	}
	return d
}

// summaryOf is e's summary, as the store reads it.
func summaryOf(e *protocol.Entry) store.Summary {
	return store.Summary{Seq: e.Seq, TimestampNS: e.TimestampNS, TraceID: e.TraceID, SpanID: e.SpanID,
		SpanName: e.SpanName, SpanKind: e.SpanKind, BodyBytes: int64(len(e.CanonicalBody)),
		CanonicalHash: e.CanonicalHash, PrevHash: e.PrevHash, HMACHash: e.HMACHash}
}

// sameJSON fails t unless hand and the encoding/json encoding of plain decode to the same
// value: every member is there, and nothing else is.
func sameJSON(t *testing.T, hand []byte, plain any) {
	t.Helper()
	var got, want map[string]any
	if err := json.Unmarshal(hand, &got); err != nil {
		t.Fatalf("hand-written JSON does not decode: %v\n%s", err, hand)
	}
	encoded, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(encoded, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hand-written:\n%s\nencoding/json:\n%s", hand, encoded)
	}
}

// TestEntryJSONIsTheViewsJSON checks the hand-written encoders against encoding/json.
func TestEntryJSONIsTheViewsJSON(t *testing.T) {
	sealed, err := protocol.NewEntry(testSecret, 3, protocol.GenesisPrevHash, testBody(3))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]func(e *protocol.Entry){
		"a sealed entry":                  func(*protocol.Entry) {},
		"quotes, backslashes and HTML":    func(e *protocol.Entry) { e.SpanName = `say "hi" \ <b>&amp;</b>` },
		"control characters":              func(e *protocol.Entry) { e.SpanKind = "a\x00b\x1fc\nd\te" },
		"non-ASCII":                       func(e *protocol.Entry) { e.SpanName = "naïve ✓ 𝄞 \u2028" },
		"a timestamp that is not decimal": func(e *protocol.Entry) { e.TimestampNS = "soon" },
		"a body that is not JSON":         func(e *protocol.Entry) { e.CanonicalBody = []byte("{nope") },
		"an empty body":                   func(e *protocol.Entry) { e.CanonicalBody = []byte{} },
		"a body with spaces":              func(e *protocol.Entry) { e.CanonicalBody = []byte(`{ "a" : [1, 2] }`) },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			e := *sealed
			edit(&e)
			detail := appendEntryJSON(nil, &e)
			sameJSON(t, detail, entryDetailOf(&e))
			var strictDetail entryDetail
			decode(t, detail, &strictDetail)
			sum := summaryOf(&e)
			summary := appendSummaryJSON(nil, &sum)
			sameJSON(t, summary, summaryViewOf(&sum))
			var strictSummary entrySummary
			decode(t, summary, &strictSummary)
		})
	}
	// Columns that are not UTF-8 still make valid JSON.
	e := *sealed
	e.SpanName, e.CanonicalBody = "bad \xff byte", []byte("{\"a\":\"\xfe\"}")
	out := appendEntryJSON(nil, &e)
	var v entryDetail
	if err := json.Unmarshal(out, &v); err != nil || v.SpanName != "bad \uFFFD byte" || string(v.Body) != "null" {
		t.Fatalf("invalid UTF-8: %+v, %v\n%q", v, err, out)
	}
	sum := summaryOf(&e)
	var vs entrySummary
	if err := json.Unmarshal(appendSummaryJSON(nil, &sum), &vs); err != nil || vs.SpanName != "bad \uFFFD byte" {
		t.Fatalf("invalid UTF-8 in a summary: %+v, %v", vs, err)
	}
}

func TestWritePage(t *testing.T) {
	var page []store.Summary
	prev := protocol.GenesisPrevHash
	for i := int64(1); i <= 3; i++ {
		e, err := protocol.NewEntry(testSecret, i, prev, testBody(i))
		if err != nil {
			t.Fatal(err)
		}
		page, prev = append(page, summaryOf(e)), e.HMACHash
	}
	rec := httptest.NewRecorder()
	writePage(rec, page, 9, 0, 3)
	var p entryPage
	decode(t, rec.Body.Bytes(), &p)
	if p.Total != 9 || p.Limit != 3 || len(p.Entries) != 3 || rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
		t.Fatalf("page %+v, headers %v", p, rec.Header())
	}
	for i := range page {
		if want := summaryViewOf(&page[i]); !reflect.DeepEqual(p.Entries[i], want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, p.Entries[i], want)
		}
	}
}
