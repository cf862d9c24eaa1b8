package protocol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Limits of the export reader. An input past them is malformed, so a hostile export
// cannot make a verifier hold more than a few of them in memory.
const (
	// MaxEntryBytes bounds one entry's JSON, and so its body.
	MaxEntryBytes = 32 << 20
	// MaxHeaderMemberBytes bounds one header member's JSON value.
	MaxHeaderMemberBytes = 64 << 10
	// maxHeaderMembers bounds how many members an export object may have.
	maxHeaderMembers = 32
)

// member is one top-level member of an export other than entries.
type member struct {
	key string
	raw json.RawMessage
}

// ExportReader reads a cairn-chain-v2 export as a stream: entries one at a time, and the
// header members wherever they stand in the object. It holds one entry at a time.
//
// Call Next until it returns io.EOF, then Header. The reader checks JSON syntax and the
// shape of each entry; it verifies nothing (see VerifyExport).
type ExportReader struct {
	lx         lexer
	state      int
	members    []member
	scratch    []byte // string members of the entry being read
	inEntries  bool   // the entries member has been seen
	entryCount int64  // entries read so far
}

const (
	stateStart = iota
	stateMembers
	stateEntries
	stateDone
)

// NewExportReader returns a reader of the export in r.
func NewExportReader(r io.Reader) *ExportReader {
	return &ExportReader{lx: lexer{r: bufio.NewReaderSize(r, 64<<10)}}
}

// Next reads the next entry into e, reusing e's CanonicalBody buffer. It returns io.EOF
// once the export object has been read to its end, and an error wrapping ErrMalformed
// for input that is not a well-formed export.
func (x *ExportReader) Next(e *Entry) error {
	for {
		switch x.state {
		case stateStart:
			if err := x.lx.expect('{'); err != nil {
				return x.fail(err)
			}
			x.state = stateMembers
			if c, err := x.lx.peek(); err != nil {
				return x.fail(err)
			} else if c == '}' {
				return x.fail(errors.New("export object is empty"))
			}
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
			if err := x.afterValue(); err != nil {
				return x.fail(err)
			}
		case stateDone:
			return io.EOF
		default:
			return x.fail(errors.New("reader used after an error"))
		}
	}
}

// Header decodes and returns the export's header and signature, once Next has returned
// io.EOF. It checks their shape (see VerifyExport for what is verified).
func (x *ExportReader) Header() (*SignedHeader, error) {
	if x.state != stateDone {
		return nil, fmt.Errorf("%w: export not read to its end", ErrMalformed)
	}
	return decodeHeader(x.members)
}

// HasEntries reports whether the export had an entries member (even an empty one).
func (x *ExportReader) HasEntries() bool { return x.inEntries }

func (x *ExportReader) fail(err error) error {
	x.state = -1
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("export ends early (truncated?) at byte %d", x.lx.off)
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// nextMember reads one member key; for "entries" it enters the array, for others it
// stores the raw value. It reports false at the end of the object.
func (x *ExportReader) nextMember() (bool, error) {
	keyBytes, err := x.lx.key()
	if err != nil {
		return false, err
	}
	key := string(keyBytes)
	for _, m := range x.members {
		if m.key == key {
			return false, fmt.Errorf("duplicate member %q", key)
		}
	}
	if key == "entries" {
		if x.inEntries {
			return false, errors.New(`duplicate member "entries"`)
		}
		x.inEntries = true
		if err := x.lx.expect('['); err != nil {
			return false, err
		}
		x.state = stateEntries
		return true, nil
	}
	if len(x.members) == maxHeaderMembers {
		return false, fmt.Errorf("more than %d members", maxHeaderMembers)
	}
	raw, err := x.lx.rawValue(MaxHeaderMemberBytes)
	if err != nil {
		return false, fmt.Errorf("member %q: %w", key, err)
	}
	x.members = append(x.members, member{key: key, raw: raw})
	return true, x.afterValue()
}

// afterValue consumes the ',' or '}' after a member's value.
func (x *ExportReader) afterValue() error {
	c, err := x.lx.next()
	if err != nil {
		return err
	}
	switch c {
	case ',':
		x.state = stateMembers
		return nil
	case '}':
		x.state = stateDone
		return x.lx.end()
	}
	return fmt.Errorf("at byte %d: got %q, want ',' or '}'", x.lx.off-1, c)
}

// nextEntry reads the next element of entries into e, or reports false at ']'.
func (x *ExportReader) nextEntry(e *Entry) (bool, error) {
	c, err := x.lx.next()
	if err != nil {
		return false, err
	}
	switch {
	case c == ']':
		return false, nil
	case c == ',' && x.entryCount > 0:
		if c, err = x.lx.next(); err != nil {
			return false, err
		}
	}
	if c != '{' {
		return false, fmt.Errorf("at byte %d: entries must be objects", x.lx.off-1)
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
		key, err := x.lx.key()
		if err != nil {
			return err
		}
		bit := 0
		switch string(key) {
		case "seq":
			bit = fSeq
			e.Seq, err = x.lx.int()
		case "canonical_body_b64":
			bit = fBody
			var b64 []byte
			if b64, err = x.lx.plainStr(MaxEntryBytes); err == nil {
				e.CanonicalBody, err = decodeBase64(e.CanonicalBody[:0], b64)
			}
		default:
			for i, f := range entryStrings {
				if f.key == string(key) {
					bit = f.bit
					read := x.lx.plainStr // hex and decimal columns, checked by checkShape
					if f.bit == fSpanName || f.bit == fSpanKind {
						read = x.lx.str
					}
					var v []byte
					if v, err = read(MaxEntryBytes); err == nil {
						spans[i] = [2]int{len(x.scratch), len(x.scratch) + len(v)}
						x.scratch = append(x.scratch, v...)
					}
					break
				}
			}
			if bit == 0 {
				return fmt.Errorf("entry has unknown member %q", key)
			}
		}
		if err != nil {
			return fmt.Errorf("entry member %q: %w", key, err)
		}
		if seen&bit != 0 {
			return fmt.Errorf("entry has member %q twice", key)
		}
		seen |= bit
		c, err := x.lx.next()
		if err != nil {
			return err
		}
		if c == '}' {
			break
		}
		if c != ',' {
			return fmt.Errorf("at byte %d: got %q in an entry, want ',' or '}'", x.lx.off-1, c)
		}
	}
	if seen != fAll {
		return fmt.Errorf("entry after seq %d lacks members (has %010b of %010b)", e.Seq, seen, fAll)
	}
	all := string(x.scratch)
	for i, dst := range [...]*string{&e.TimestampNS, &e.TraceID, &e.SpanID, &e.SpanName, &e.SpanKind, &e.CanonicalHash, &e.PrevHash, &e.HMACHash} {
		*dst = all[spans[i][0]:spans[i][1]]
	}
	return nil
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
