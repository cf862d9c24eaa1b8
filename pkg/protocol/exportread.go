package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// Limits of the export reader. An input past them is malformed, so a hostile export
// cannot make a verifier hold more than a few of them in memory.
const (
	// MaxEntryBytes bounds one string of an entry as written, and so its body.
	MaxEntryBytes = 32 << 20
	// MaxHeaderMemberBytes bounds one string of the header as written.
	MaxHeaderMemberBytes = 64 << 10
	// maxKeyBytes bounds a member name as written: every name an export may hold is
	// shorter.
	maxKeyBytes = 256
	// maxSafeInteger is 2^53−1: every integer of an export is at most this.
	maxSafeInteger = 1<<53 - 1
)

// exportBufferSize is how many bytes the export reader asks of its source at a time.
// Tests use tiny sizes to put a buffer refill at every byte of an export.
const exportBufferSize = jsonread.DefaultBufferSize

// ExportReader reads a cairn-chain-v2 export as a stream: entries one at a time, and the
// header members wherever they stand in the object. It holds one entry at a time.
//
// Call Next until it returns io.EOF, then Header. The reader checks the export's JSON
// (docs/PROTOCOL.md §1: strict UTF-8, no lone surrogates, no duplicate members) and the
// shape of each member as it is read; it verifies nothing (see VerifyExport).
type ExportReader struct {
	rd         *jsonread.Reader
	state      int
	header     SignedHeader
	seen       map[string]bool // header members read, signature included
	scratch    []byte          // string members of the entry being read
	inEntries  bool            // the entries member has been seen
	entryCount int64           // entries read so far
}

const (
	stateStart = iota
	stateMembers
	stateEntries
	stateDone
)

// NewExportReader returns a reader of the export in r.
func NewExportReader(r io.Reader) *ExportReader {
	return newExportReader(r, exportBufferSize)
}

// newExportReader returns a reader that asks r for bufferSize bytes at a time.
func newExportReader(r io.Reader, bufferSize int) *ExportReader {
	rd := jsonread.NewStream(r, bufferSize)
	rd.MaxDepth = 3 // the export object, entries, an entry; the signature object
	return &ExportReader{rd: rd, seen: map[string]bool{}}
}

// Next reads the next entry into e, reusing e's CanonicalBody buffer. It returns io.EOF
// once the export object has been read to its end, and an error wrapping ErrMalformed
// for input that is not a well-formed export.
func (x *ExportReader) Next(e *Entry) error {
	for {
		switch x.state {
		case stateStart:
			if err := x.rd.Begin(jsonread.Object); err != nil {
				return x.fail(err)
			}
			x.state = stateMembers
		case stateMembers:
			more, err := x.nextMember()
			if err != nil {
				return x.fail(err)
			}
			if !more {
				x.state = stateDone
				return io.EOF
			}
		case stateEntries:
			more, err := x.nextEntry(e)
			if err != nil {
				return x.fail(err)
			}
			if more {
				return nil
			}
			x.state = stateMembers
		case stateDone:
			return io.EOF
		default:
			return x.fail(errors.New("reader used after an error"))
		}
	}
}

// Header returns the export's header and signature, once Next has returned io.EOF. It
// checks that every member is present, the header's shape and the signature object's
// (algorithm, an Ed25519 key, a 64-byte value; see VerifyExport for what is verified).
func (x *ExportReader) Header() (*SignedHeader, error) {
	if x.state != stateDone {
		return nil, fmt.Errorf("%w: export not read to its end", ErrMalformed)
	}
	return finishHeader(&x.header, x.seen)
}

// HasEntries reports whether the export had an entries member (even an empty one).
func (x *ExportReader) HasEntries() bool { return x.inEntries }

func (x *ExportReader) fail(err error) error {
	x.state = -1
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("export ends early (truncated?) at byte %d", x.rd.Offset())
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// nextMember reads one member: for "entries" it enters the array, any other it decodes
// into the header. It reports false at the end of the object.
func (x *ExportReader) nextMember() (bool, error) {
	x.rd.MaxToken = maxKeyBytes
	keyBytes, ok, err := x.rd.Key()
	if err != nil {
		return false, err
	}
	if !ok {
		if len(x.seen) == 0 && !x.inEntries {
			return false, errors.New("export object is empty")
		}
		return false, x.rd.End()
	}
	key := string(keyBytes)
	if x.seen[key] || (key == "entries" && x.inEntries) {
		return false, fmt.Errorf("duplicate member %s", Quote(key))
	}
	if key == "entries" {
		x.inEntries = true
		if err := x.rd.Begin(jsonread.Array); err != nil {
			return false, err
		}
		x.state = stateEntries
		return true, nil
	}
	x.seen[key] = true
	if err := readHeaderMember(x.rd, &x.header, key); err != nil {
		return false, fmt.Errorf("member %s: %w", Quote(key), err)
	}
	return true, nil
}

// nextEntry reads the next element of entries into e, or reports false at ']'.
func (x *ExportReader) nextEntry(e *Entry) (bool, error) {
	more, err := x.rd.More()
	if err != nil || !more {
		return false, err
	}
	if k, err := x.rd.Peek(); err != nil {
		return false, err
	} else if k != jsonread.Object {
		return false, fmt.Errorf("at byte %d: entries must be objects", x.rd.Offset())
	}
	if err := x.rd.Begin(jsonread.Object); err != nil {
		return false, err
	}
	x.entryCount++
	return true, x.readEntry(e)
}

// Entry member bits, to detect missing and duplicate members.
const (
	fSeq = 1 << iota
	fTimestamp
	fTraceID
	fSpanID
	fSpanName
	fSpanKind
	fBody
	fCanonicalHash
	fPrevHash
	fHMACHash
	fAll = 1<<iota - 1
)

// entryStrings are the string members of an entry, in the order of their bits.
var entryStrings = [...]struct {
	key string
	bit int
}{
	{"timestamp_ns", fTimestamp}, {"trace_id", fTraceID}, {"span_id", fSpanID},
	{"span_name", fSpanName}, {"span_kind", fSpanKind}, {"canonical_hash", fCanonicalHash},
	{"prev_hash", fPrevHash}, {"hmac_hash", fHMACHash},
}

// readEntry reads an entry object whose '{' has been consumed. The string members are
// gathered in one buffer and become strings with one allocation.
func (x *ExportReader) readEntry(e *Entry) error {
	seen := 0
	var spans [len(entryStrings)][2]int
	x.scratch = x.scratch[:0]
	for {
		x.rd.MaxToken = maxKeyBytes
		key, ok, err := x.rd.Key()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		bit := 0
		switch string(key) {
		case "seq":
			bit = fSeq
			e.Seq, err = readInteger(x.rd)
		case "canonical_body_b64":
			bit = fBody
			var b64 []byte
			if b64, err = readPlain(x.rd, MaxEntryBytes); err == nil {
				e.CanonicalBody, err = decodeBase64(e.CanonicalBody[:0], b64)
			}
		default:
			for i, f := range entryStrings {
				if f.key != string(key) {
					continue
				}
				bit = f.bit
				var v []byte
				if f.bit == fSpanName || f.bit == fSpanKind {
					x.rd.MaxToken = MaxEntryBytes
					v, _, err = x.rd.String()
				} else {
					v, err = readPlain(x.rd, MaxEntryBytes) // hex and decimal, checked by checkShape
				}
				if err == nil {
					spans[i] = [2]int{len(x.scratch), len(x.scratch) + len(v)}
					x.scratch = append(x.scratch, v...)
				}
				break
			}
			if bit == 0 {
				return fmt.Errorf("entry has unknown member %s", Quote(string(key)))
			}
		}
		if err != nil {
			return fmt.Errorf("entry member %q: %w", entryKeyName(bit), err)
		}
		if seen&bit != 0 {
			return fmt.Errorf("entry has member %q twice", entryKeyName(bit))
		}
		seen |= bit
	}
	if seen != fAll {
		return fmt.Errorf("entry %d of the export lacks members (has %010b of %010b)", x.entryCount, seen, fAll)
	}
	all := string(x.scratch)
	for i, dst := range [...]*string{&e.TimestampNS, &e.TraceID, &e.SpanID, &e.SpanName, &e.SpanKind, &e.CanonicalHash, &e.PrevHash, &e.HMACHash} {
		*dst = all[spans[i][0]:spans[i][1]]
	}
	return nil
}

// entryKeyName names an entry member by its bit (the key itself is gone once its value
// has been read).
func entryKeyName(bit int) string {
	switch bit {
	case fSeq:
		return "seq"
	case fBody:
		return "canonical_body_b64"
	}
	for _, f := range entryStrings {
		if f.bit == bit {
			return f.key
		}
	}
	return "?"
}

// readPlain reads a string member that must be written without escape sequences (hex,
// base64, decimal, and the header's other ASCII members), of at most limit bytes. The
// result is valid until the next read.
func readPlain(rd *jsonread.Reader, limit int) ([]byte, error) {
	rd.MaxToken = limit
	v, escaped, err := rd.String()
	if err == nil && escaped {
		err = errors.New("escape sequence in a member written without escapes")
	}
	return v, err
}

// readInteger reads an export integer: a JSON number written as decimal digits without
// sign, fraction, exponent or leading zeros, at most 2^53−1.
func readInteger(rd *jsonread.Reader) (int64, error) {
	k, err := rd.Peek()
	if err != nil {
		return 0, err
	}
	if k != jsonread.Number {
		return 0, fmt.Errorf("at byte %d: want an integer", rd.Offset())
	}
	rd.MaxToken = 32
	text, err := rd.Number()
	if err != nil {
		return 0, err
	}
	var v int64
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("number %s is not written as a non-negative integer", text)
		}
		v = v*10 + int64(c-'0')
		if v > maxSafeInteger {
			return 0, fmt.Errorf("integer %s is above 2^53-1", text)
		}
	}
	if len(text) > 1 && text[0] == '0' {
		return 0, fmt.Errorf("number %s has a leading zero", text) // the grammar refuses it too
	}
	return v, nil
}

// decodeBase64 decodes standard, padded base64 that contains nothing but the alphabet.
func decodeBase64(dst, src []byte) ([]byte, error) {
	if bytes.IndexByte(src, '\n') >= 0 || bytes.IndexByte(src, '\r') >= 0 {
		return nil, errors.New("base64 must not contain line breaks")
	}
	n := base64.StdEncoding.DecodedLen(len(src))
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	n, err := base64.StdEncoding.Strict().Decode(dst[:n], src)
	if err != nil {
		return nil, fmt.Errorf("bad base64: %w", err)
	}
	return dst[:n], nil
}
