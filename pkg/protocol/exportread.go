package protocol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
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

// lexer reads JSON tokens from a buffered stream.
type lexer struct {
	r   *bufio.Reader
	off int64 // bytes consumed
	buf []byte
}

// next consumes and returns the next byte that is not whitespace.
func (l *lexer) next() (byte, error) {
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		l.off++
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c, nil
		}
	}
}

// peek returns the next byte that is not whitespace without consuming it.
func (l *lexer) peek() (byte, error) {
	c, err := l.next()
	if err == nil {
		_ = l.r.UnreadByte()
		l.off--
	}
	return c, err
}

func (l *lexer) expect(want byte) error {
	c, err := l.next()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("at byte %d: got %q, want %q", l.off-1, c, want)
	}
	return nil
}

// end checks that nothing but whitespace follows.
func (l *lexer) end() error {
	if c, err := l.next(); !errors.Is(err, io.EOF) {
		if err != nil {
			return err
		}
		return fmt.Errorf("at byte %d: %q after the export object", l.off-1, c)
	}
	return nil
}

// key reads a member name and its colon. The result is valid until the next read.
func (l *lexer) key() ([]byte, error) {
	k, err := l.str(256)
	if err != nil {
		return nil, err
	}
	return k, l.expect(':')
}

// quoted reads a string up to its closing quote and returns its raw text, escapes
// undecoded, and whether it holds any backslash. The result is valid until the next read.
func (l *lexer) quoted(limit int) (raw []byte, escaped bool, err error) {
	if err := l.expect('"'); err != nil {
		return nil, false, err
	}
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('"')
		l.off += int64(len(chunk))
		l.buf = append(l.buf, chunk...)
		if len(l.buf) > limit+1 {
			return nil, false, fmt.Errorf("string longer than %d bytes", limit)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		raw := l.buf[:len(l.buf)-1]
		if bytes.IndexByte(chunk, '\\') >= 0 {
			escaped = true
		}
		// The quote ends the string unless an odd run of backslashes precedes it.
		n := 0
		for i := len(raw) - 1; i >= 0 && raw[i] == '\\'; i-- {
			n++
		}
		if n%2 == 0 {
			return raw, escaped, nil
		}
	}
}

// str reads a string value of at most limit bytes, checking that it is valid JSON text
// and decoding its escapes. The result is valid until the next read.
func (l *lexer) str(limit int) ([]byte, error) {
	raw, escaped, err := l.quoted(limit)
	if err != nil {
		return nil, err
	}
	if !escaped {
		ascii := true
		for _, c := range raw {
			if stringSpecial[c] {
				if c < 0x20 {
					return nil, errors.New("control character in string")
				}
				ascii = false
			}
		}
		if !ascii && !utf8.Valid(raw) {
			return nil, errors.New("string is not valid UTF-8")
		}
		return raw, nil
	}
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &v); err != nil {
		return nil, fmt.Errorf("bad string: %w", err)
	}
	return []byte(v), nil
}

// plainStr reads a string whose value is ASCII that JSON never needs to escape (base64,
// hex, decimal digits): escapes are refused, and the characters are left for the caller's
// own check of the alphabet. The result is valid until the next read.
func (l *lexer) plainStr(limit int) ([]byte, error) {
	raw, escaped, err := l.quoted(limit)
	if err == nil && escaped {
		err = errors.New("escape sequence where only plain ASCII is allowed")
	}
	return raw, err
}

// int reads a non-negative integer below 2^53.
func (l *lexer) int() (int64, error) {
	var digits [20]byte
	n := 0
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c < '0' || c > '9' || n == len(digits) {
			_ = l.r.UnreadByte()
			break
		}
		l.off++
		digits[n] = c
		n++
	}
	if n == 0 || (n > 1 && digits[0] == '0') {
		return 0, fmt.Errorf("at byte %d: want a non-negative integer", l.off)
	}
	v, err := strconv.ParseInt(string(digits[:n]), 10, 64)
	if err != nil || v > 1<<53-1 {
		return 0, fmt.Errorf("integer %s out of range", digits[:n])
	}
	return v, nil
}

// rawValue reads one JSON value of at most limit bytes and returns a copy of its text.
func (l *lexer) rawValue(limit int) (json.RawMessage, error) {
	c, err := l.next()
	if err != nil {
		return nil, err
	}
	out := []byte{c}
	depth, inString := 0, c == '"'
	switch c {
	case '{', '[':
		depth = 1
	case '"':
	default: // a number or literal runs to the next delimiter
		for {
			c, err := l.r.ReadByte()
			if err != nil {
				return nil, err
			}
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				_ = l.r.UnreadByte()
				break
			}
			l.off++
			if out = append(out, c); len(out) > limit {
				return nil, fmt.Errorf("value longer than %d bytes", limit)
			}
		}
		return validRaw(out)
	}
	for escape := false; depth > 0 || inString; {
		c, err := l.r.ReadByte()
		if err != nil {
			return nil, err
		}
		l.off++
		if out = append(out, c); len(out) > limit {
			return nil, fmt.Errorf("value longer than %d bytes", limit)
		}
		switch {
		case escape:
			escape = false
		case inString:
			escape = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return validRaw(out)
}

func validRaw(raw []byte) (json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("invalid JSON value %.40q", raw)
	}
	return raw, nil
}
