package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The stream lexer under ExportReader: JSON tokens read from a bufio.Reader, one entry's
// worth of buffer at a time.

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
		// Every chunk is searched: a string longer than the buffer arrives in several,
		// and an escape in any of them means the whole string must be decoded.
		if !escaped && bytes.IndexByte(chunk, '\\') >= 0 {
			escaped = true
		}
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

// int reads a non-negative integer below 2^53, after any whitespace.
func (l *lexer) int() (int64, error) {
	if _, err := l.peek(); err != nil { // skips the whitespace JSON allows before a value
		return 0, err
	}
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
