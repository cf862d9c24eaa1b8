package bijotel

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ExportHeader is what an export states around its entries, as the caller already knows
// it before writing them.
type ExportHeader struct {
	// Format is FormatV1 or FormatV2.
	Format string
	// CreatedAt is written as Python's isoformat (see PythonISOTime).
	CreatedAt time.Time
	// EntriesCount is how many rows will be written.
	EntriesCount int64
	// HeadHash is the last row's hmac_hash, GenesisHash when there are none.
	HeadHash string
	// ChainSignature is ChainSignature(secret, HeadHash, EntriesCount). The writer does
	// not hold the secret; it writes what it is given.
	ChainSignature string
	// Segment is the segment block of a range export (rows not from a chain's first row,
	// or not to its last), nil for a whole chain. It needs at least one row.
	Segment *Segment
	// SignKey, for FormatV2 only, signs the ASCII chain_signature; nil writes no
	// ed25519_signature block.
	SignKey ed25519.PrivateKey
}

// ExportWriter writes an export byte for byte as the original's export_chain does
// (LEGACY-BIJOTEL.md §2.1–2.2): json.dumps(payload, indent=2) with ensure_ascii, members
// in the original's order, no trailing newline. Rows are streamed: call WriteRow for each
// in seq order, then Close. The writer holds one row at a time.
//
// It refuses to write an export that states what its rows are not: Close fails when the
// rows written are not EntriesCount, the last one's hmac_hash is not HeadHash, or the
// Segment disagrees with the rows (first_seq, last_seq, total_in_segment,
// boundary_prev_hash). It checks no HMAC: the caller verified the rows. On an error the
// output is incomplete and must be discarded.
type ExportWriter struct {
	w         *bufio.Writer
	h         ExportHeader
	n         int64
	firstSeq  int64
	firstPrev string
	lastSeq   int64
	lastHMAC  string
	buf       []byte
	err       error
}

// NewExportWriter checks h and writes the export's members before the entries to w.
func NewExportWriter(w io.Writer, h ExportHeader) (*ExportWriter, error) {
	switch {
	case h.Format != FormatV1 && h.Format != FormatV2:
		return nil, malformedf("export format %s, want %s or %s", protocol.Quote(h.Format), FormatV1, FormatV2)
	case h.SignKey != nil && h.Format != FormatV2:
		return nil, malformedf("only %s carries an Ed25519 signature", FormatV2)
	case h.SignKey != nil && len(h.SignKey) != ed25519.PrivateKeySize:
		return nil, malformedf("Ed25519 private key is %d bytes, want %d", len(h.SignKey), ed25519.PrivateKeySize)
	case h.EntriesCount < 0:
		return nil, malformedf("entries_count %d is negative", h.EntriesCount)
	case !isHash(h.HeadHash) || !isHash(h.ChainSignature):
		return nil, malformedf("head_hash and chain_signature must be 64 lowercase hex digits")
	case h.Segment != nil && !isHash(h.Segment.BoundaryPrevHash):
		return nil, malformedf("segment boundary_prev_hash must be 64 lowercase hex digits")
	}
	x := &ExportWriter{w: bufio.NewWriterSize(w, 256<<10), h: h}
	b := make([]byte, 0, 512)
	b = append(b, "{\n  \"version\": \""+FormatVersion+"\",\n  \"format\": \""+h.Format+"\",\n  \"created_at\": \""...)
	b = append(b, PythonISOTime(h.CreatedAt)...)
	b = append(b, "\",\n  \"entries_count\": "...)
	b = strconv.AppendInt(b, h.EntriesCount, 10)
	b = append(b, ",\n  \"head_hash\": \""+h.HeadHash+"\",\n  \"chain_signature\": \""+h.ChainSignature+"\",\n  \"entries\": "...)
	x.buf = b
	if _, err := x.w.Write(b); err != nil {
		return nil, err
	}
	return x, nil
}

// WriteRow writes the next row. Its hashes must be 64 lowercase hex digits and its seq
// above the previous row's.
func (x *ExportWriter) WriteRow(r *Row) error {
	if x.err != nil {
		return x.err
	}
	switch {
	case x.n >= x.h.EntriesCount:
		return x.fail(malformedf("row seq %d is beyond entries_count %d", r.Seq, x.h.EntriesCount))
	case r.Seq < 1 || (x.n > 0 && r.Seq <= x.lastSeq):
		return x.fail(malformedf("row seq %d does not follow seq %d", r.Seq, x.lastSeq))
	case !isHash(r.CanonicalHash) || !isHash(r.PrevHash) || !isHash(r.HMACHash):
		return x.fail(malformedf("row seq %d: canonical_hash, prev_hash and hmac_hash must be 64 lowercase hex digits", r.Seq))
	case r.SemanticBodyHash != nil && !isHash(*r.SemanticBodyHash):
		return x.fail(malformedf("row seq %d: semantic_body_hash must be 64 lowercase hex digits or null", r.Seq))
	}
	b := x.buf[:0]
	if x.n == 0 {
		b = append(b, "[\n    {\n      \"seq\": "...)
		x.firstSeq, x.firstPrev = r.Seq, r.PrevHash
	} else {
		b = append(b, ",\n    {\n      \"seq\": "...)
	}
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, ",\n      \"timestamp_ns\": "...)
	b = strconv.AppendInt(b, r.TimestampNS, 10)
	var err error
	for _, m := range [...]struct {
		name  string
		value *string
	}{{"trace_id", &r.TraceID}, {"span_id", &r.SpanID}, {"span_name", &r.SpanName}, {"span_kind", r.SpanKind}} {
		b = append(b, ",\n      \""+m.name+"\": "...)
		if m.value == nil {
			b = append(b, "null"...)
		} else if b, err = appendPyString(b, *m.value); err != nil {
			return x.fail(fmt.Errorf("row seq %d %s: %w", r.Seq, m.name, err))
		}
	}
	b = append(b, ",\n      \"canonical_body_b64\": \""...)
	b = base64.StdEncoding.AppendEncode(b, r.CanonicalBody)
	b = append(b, "\",\n      \"canonical_hash\": \""+r.CanonicalHash+"\",\n      \"semantic_body_hash\": "...)
	if r.SemanticBodyHash == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, "\""+*r.SemanticBodyHash+"\""...)
	}
	b = append(b, ",\n      \"prev_hash\": \""+r.PrevHash+"\",\n      \"hmac_hash\": \""+r.HMACHash+"\"\n    }"...)
	x.buf = b
	if _, err := x.w.Write(b); err != nil {
		return x.fail(err)
	}
	x.n++
	x.lastSeq, x.lastHMAC = r.Seq, r.HMACHash
	return nil
}

// Close checks the rows against the header, writes the members after the entries and
// flushes. It does not close the underlying writer.
func (x *ExportWriter) Close() error {
	if x.err != nil {
		return x.err
	}
	if err := x.checkRows(); err != nil {
		return x.fail(err)
	}
	b := x.buf[:0]
	if x.n == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, "\n  ]"...)
	}
	if s := x.h.Segment; s != nil {
		b = append(b, ",\n  \"segment\": {\n    \"first_seq\": "...)
		b = strconv.AppendInt(b, s.FirstSeq, 10)
		b = append(b, ",\n    \"last_seq\": "...)
		b = strconv.AppendInt(b, s.LastSeq, 10)
		b = append(b, ",\n    \"total_in_segment\": "...)
		b = strconv.AppendInt(b, s.TotalInSegment, 10)
		b = append(b, ",\n    \"total_in_full_chain\": "...)
		b = strconv.AppendInt(b, s.TotalInFullChain, 10)
		b = append(b, ",\n    \"boundary_prev_hash\": \""+s.BoundaryPrevHash+"\",\n    \"is_complete_chain\": "...)
		b = strconv.AppendBool(b, s.IsCompleteChain)
		b = append(b, "\n  }"...)
	}
	if key := x.h.SignKey; key != nil {
		pub := key.Public().(ed25519.PublicKey)
		sig := ed25519.Sign(key, []byte(x.h.ChainSignature))
		b = append(b, ",\n  \"ed25519_signature\": {\n    \"public_key\": \""...)
		b = base64.StdEncoding.AppendEncode(b, pub)
		b = append(b, "\",\n    \"signature\": \""...)
		b = base64.StdEncoding.AppendEncode(b, sig)
		b = append(b, "\",\n    \"signed_over\": \""+SignedOver+"\",\n    \"algorithm\": \""+SignatureAlgorithm+"\"\n  }"...)
	}
	b = append(b, "\n}"...)
	if _, err := x.w.Write(b); err != nil {
		return x.fail(err)
	}
	if err := x.w.Flush(); err != nil {
		return x.fail(err)
	}
	x.err = errClosed
	return nil
}

var errClosed = fmt.Errorf("%w: export writer closed", protocol.ErrMalformed)

// checkRows compares what was written with what the header states.
func (x *ExportWriter) checkRows() error {
	h := x.h
	switch {
	case x.n != h.EntriesCount:
		return malformedf("wrote %d rows, entries_count states %d", x.n, h.EntriesCount)
	case x.n == 0 && h.HeadHash != GenesisHash:
		return malformedf("no rows, but head_hash is not GENESIS")
	case x.n > 0 && x.lastHMAC != h.HeadHash:
		return malformedf("head_hash is not the last row's hmac_hash")
	}
	s := h.Segment
	if s == nil {
		return nil
	}
	if x.n == 0 || s.FirstSeq != x.firstSeq || s.LastSeq != x.lastSeq || s.TotalInSegment != x.n || s.BoundaryPrevHash != x.firstPrev {
		return malformedf("segment (seq %d..%d, %d rows) disagrees with the rows written (seq %d..%d, %d rows) or their first prev_hash",
			s.FirstSeq, s.LastSeq, s.TotalInSegment, x.firstSeq, x.lastSeq, x.n)
	}
	return nil
}

func (x *ExportWriter) fail(err error) error {
	x.err = err
	return err
}

// WriteExport writes an export of rows under h: NewExportWriter, WriteRow for each, Close.
func WriteExport(w io.Writer, h ExportHeader, rows []Row) error {
	x, err := NewExportWriter(w, h)
	if err != nil {
		return err
	}
	for i := range rows {
		if err := x.WriteRow(&rows[i]); err != nil {
			return err
		}
	}
	return x.Close()
}
