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

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Entries are written by hand rather than through encoding/json: a page of the chain is
// the service's busiest answer, and encoding/json costs several times more. The output is
// exactly entrySummary's (or entryDetail's) JSON: a test decodes one into the other.
//
// A decoded body is written into the answer as it is, so it is first checked to be UTF-8
// JSON (a tampered row could break the answer).

// pageBuffers recycles the buffers answers are written into.
var pageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writePage answers with a page of the chain as an entryPage.
func writePage(w http.ResponseWriter, page []store.Summary, total int64, offset, limit int) {
	bp := pageBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"entries":[`...)
	for i := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSummaryJSON(b, &page[i])
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, `,"pagination":{"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, int64(offset)+int64(len(page)) < total)
	writeBuffer(w, bp, append(b, '}', '}'))
}

// writeEntry answers with one entry as an entryDetail.
func writeEntry(w http.ResponseWriter, e *protocol.Entry) {
	bp := pageBuffers.Get().(*[]byte)
	writeBuffer(w, bp, appendEntryJSON((*bp)[:0], e))
}

// writeBuffer answers with b, a JSON value written into *bp, and gives the buffer back.
func writeBuffer(w http.ResponseWriter, bp *[]byte, b []byte) {
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 4<<20 { // do not keep the buffer of an unusually large answer
		*bp = b
		pageBuffers.Put(bp)
	}
}

// appendSummaryJSON appends sum as entrySummary's JSON.
func appendSummaryJSON(b []byte, sum *store.Summary) []byte {
	b = appendHeadJSON(b, sum.Seq, sum.TimestampNS, sum.TraceID, sum.SpanID, sum.SpanName, sum.SpanKind)
	b = append(b, `,"body_bytes":`...)
	b = strconv.AppendInt(b, sum.BodyBytes, 10)
	b = appendHashesJSON(b, sum.CanonicalHash, sum.PrevHash, sum.HMACHash)
	return append(b, '}')
}

// appendEntryJSON appends e as entryDetail's JSON. A body that is not UTF-8 JSON is
// written as null, so the answer stays valid JSON.
func appendEntryJSON(b []byte, e *protocol.Entry) []byte {
	b = appendHeadJSON(b, e.Seq, e.TimestampNS, e.TraceID, e.SpanID, e.SpanName, e.SpanKind)
	b = append(b, `,"canonical_body_b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, e.CanonicalBody)
	b = append(b, '"')
	b = appendHashesJSON(b, e.CanonicalHash, e.PrevHash, e.HMACHash)
	b = append(b, `,"body":`...)
	if utf8.Valid(e.CanonicalBody) && json.Valid(e.CanonicalBody) {
		b = append(b, e.CanonicalBody...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// appendHeadJSON opens an entry's object with entryHead's members. Columns are written as
// stored; one that is not UTF-8 (only tampering makes one) has its bad bytes replaced
// with U+FFFD.
func appendHeadJSON(b []byte, seq int64, timestampNS, traceID, spanID, spanName, spanKind string) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	ns, err := strconv.ParseInt(timestampNS, 10, 64)
	b = append(b, `,"timestamp_ns":`...)
	if err == nil {
		b = strconv.AppendInt(b, ns, 10)
	} else {
		b = append(b, "null"...)
	}
	b = appendMember(b, "timestamp_ns_str", timestampNS)
	b = append(b, `,"time":"`...)
	if err == nil {
		b = time.Unix(0, ns).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, '"')
	b = appendMember(b, "trace_id", traceID)
	b = appendMember(b, "span_id", spanID)
	b = appendMember(b, "span_name", spanName)
	return appendMember(b, "span_kind", spanKind)
}

// appendHashesJSON appends entryHashes' members.
func appendHashesJSON(b []byte, canonicalHash, prevHash, hmacHash string) []byte {
	b = appendMember(b, "canonical_hash", canonicalHash)
	b = appendMember(b, "prev_hash", prevHash)
	return appendMember(b, "hmac_hash", hmacHash)
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
