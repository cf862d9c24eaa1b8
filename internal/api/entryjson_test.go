package api

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// entryViewOf is what appendEntryJSON must write, built the plain way.
func entryViewOf(e *protocol.Entry) entryView {
	v := entryView{Seq: e.Seq, TimestampNS: e.TimestampNS, TraceID: e.TraceID, SpanID: e.SpanID,
		SpanName: e.SpanName, SpanKind: e.SpanKind, CanonicalBodyB64: e.CanonicalBody,
		CanonicalHash: e.CanonicalHash, PrevHash: e.PrevHash, HMACHash: e.HMACHash}
	if ns, err := strconv.ParseInt(e.TimestampNS, 10, 64); err == nil {
		v.Time = time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	return v
}

// entryDetailOf is what appendEntryJSON must write with the body, built the plain way.
func entryDetailOf(e *protocol.Entry) entryDetail {
	d := entryDetail{entryView: entryViewOf(e), Body: json.RawMessage("null")}
	if utf8.Valid(e.CanonicalBody) && json.Valid(e.CanonicalBody) {
		d.Body = e.CanonicalBody
	}
	return d
}

// TestEntryJSONIsEntryViewJSON checks the hand-written encoder against encoding/json:
// both outputs decode to the same value, every member is there, and nothing else is.
func TestEntryJSONIsEntryViewJSON(t *testing.T) {
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
			for _, withBody := range []bool{false, true} {
				var got, want map[string]any
				hand := appendEntryJSON(nil, &e, withBody)
				if err := json.Unmarshal(hand, &got); err != nil {
					t.Fatalf("hand-written JSON does not decode: %v\n%s", err, hand)
				}
				var v any = entryViewOf(&e)
				if withBody {
					v = entryDetailOf(&e)
				}
				plain, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(plain, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("with body %t, hand-written:\n%s\nencoding/json:\n%s", withBody, hand, plain)
				}
				var strict entryDetail
				decode(t, hand, &strict)
			}
		})
	}
	// Columns that are not UTF-8 still make valid JSON.
	e := *sealed
	e.SpanName, e.CanonicalBody = "bad \xff byte", []byte("{\"a\":\"\xfe\"}")
	out := appendEntryJSON(nil, &e, true)
	var v entryDetail
	if err := json.Unmarshal(out, &v); err != nil || v.SpanName != "bad \uFFFD byte" || string(v.Body) != "null" {
		t.Fatalf("invalid UTF-8: %+v, %v\n%q", v, err, out)
	}
}

func TestWriteEntriesPage(t *testing.T) {
	var entries []protocol.Entry
	prev := protocol.GenesisPrevHash
	for i := int64(1); i <= 3; i++ {
		e, err := protocol.NewEntry(testSecret, i, prev, testBody(i))
		if err != nil {
			t.Fatal(err)
		}
		entries, prev = append(entries, *e), e.HMACHash
	}
	rec := httptest.NewRecorder()
	writeEntries(rec, entries, &entryPage{Total: 9, Offset: 0, Limit: 3})
	var p entryPage
	decode(t, rec.Body.Bytes(), &p)
	if p.Total != 9 || p.Limit != 3 || len(p.Entries) != 3 || rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
		t.Fatalf("page %+v, headers %v", p, rec.Header())
	}
	for i := range entries {
		if want := entryViewOf(&entries[i]); !reflect.DeepEqual(p.Entries[i], want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, p.Entries[i], want)
		}
	}
}
