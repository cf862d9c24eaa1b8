package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Entries are written by hand rather than through encoding/json: a page of the chain is
// the service's busiest answer, and encoding/json costs several times more. The output is
// exactly entryView's (or entryDetail's) JSON: a test decodes one into the other.
//
// Pages give bodies in base64 only. A decoded body is written into the answer as it is,
// so it must first be checked to be UTF-8 JSON (a tampered row could break the answer),
// which costs more than the rest of the entry; it is done for GET /api/chain/{seq} alone.

// pageBuffers recycles the buffers pages are written into.
var pageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writeEntries answers with entries as JSON: an entryPage, or when page is nil the first
// entry as an entryDetail.
func writeEntries(w http.ResponseWriter, entries []protocol.Entry, page *entryPage) {
	bp := pageBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	if page == nil {
		b = appendEntryJSON(b, &entries[0], true)
	} else {
		b = append(b, `{"entries":[`...)
		for i := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEntryJSON(b, &entries[i], false)
		}
		b = append(b, `],"total":`...)
		b = strconv.AppendInt(b, page.Total, 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, int64(page.Offset), 10)
		b = append(b, `,"limit":`...)
		b = strconv.AppendInt(b, int64(page.Limit), 10)
		b = append(b, '}')
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 4<<20 { // do not keep the buffer of an unusually large page
		*bp = b
		pageBuffers.Put(bp)
	}
}

// appendEntryJSON appends e as entryView's JSON, or entryDetail's withBody. Columns are
// written as stored; a column that is not UTF-8 (only tampering makes one) has its bad
// bytes replaced with U+FFFD, and a body that is not UTF-8 JSON is written as null, so the
// answer stays valid JSON.
func appendEntryJSON(b []byte, e *protocol.Entry, withBody bool) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = appendMember(b, "timestamp_ns", e.TimestampNS)
	b = append(b, `,"time":"`...)
	if ns, err := strconv.ParseInt(e.TimestampNS, 10, 64); err == nil {
		b = time.Unix(0, ns).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, '"')
	b = appendMember(b, "trace_id", e.TraceID)
	b = appendMember(b, "span_id", e.SpanID)
	b = appendMember(b, "span_name", e.SpanName)
	b = appendMember(b, "span_kind", e.SpanKind)
	b = append(b, `,"canonical_body_b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, e.CanonicalBody)
	b = append(b, '"')
	b = appendMember(b, "canonical_hash", e.CanonicalHash)
	b = appendMember(b, "prev_hash", e.PrevHash)
	b = appendMember(b, "hmac_hash", e.HMACHash)
	if withBody {
		b = append(b, `,"body":`...)
		if utf8.Valid(e.CanonicalBody) && json.Valid(e.CanonicalBody) {
			b = append(b, e.CanonicalBody...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// appendMember appends ,"name":"value".
func appendMember(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	return canonical.AppendString(b, value)
}
