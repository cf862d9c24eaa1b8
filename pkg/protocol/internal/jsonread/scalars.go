package jsonread

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// String reads the next value, which must be a string, and returns its decoded text and
// whether it held an escape. The text is valid until the next call; from a byte slice,
// an unescaped string aliases it.
func (r *Reader) String() (text []byte, escaped bool, err error) {
	if err := r.expect('"'); err != nil {
		return nil, false, err
	}
	start := r.pos // the first byte not yet copied to out
	out := r.scratch[:0]
	for {
		r.pos += ScanPlain(r.buf[r.pos:])
		if r.MaxToken > 0 && len(out)+r.pos-start > r.MaxToken {
			return nil, false, r.errorf("string longer than %d bytes", r.MaxToken)
		}
		if r.pos == len(r.buf) {
			shift, more, err := r.fill(start)
			start -= shift
			if err != nil {
				return nil, false, err
			}
			if !more {
				return nil, false, r.errorf("unterminated string")
			}
			continue
		}
		switch c := r.buf[r.pos]; {
		case c == '"':
			r.pos++
			if !escaped {
				return r.buf[start : r.pos-1], false, nil
			}
			out = append(out, r.buf[start:r.pos-1]...)
			r.scratch = out
			return out, true, nil
		case c == '\\':
			escaped = true
			out = append(out, r.buf[start:r.pos]...)
			if _, err := r.need(12, r.pos); err != nil { // the longest escape: a surrogate pair
				return nil, false, err
			}
			if out, err = r.escape(out); err != nil {
				return nil, false, err
			}
			start = r.pos
		case c < 0x20:
			return nil, false, r.errorf("control character %#02x in a string", c)
		default: // the lead byte of a multi-byte UTF-8 sequence
			shift, err := r.need(utf8.UTFMax, start)
			start -= shift
			if err != nil {
				return nil, false, err
			}
			rn, size := utf8.DecodeRune(r.buf[r.pos:])
			if rn == utf8.RuneError && size == 1 {
				return nil, false, r.failf(ErrUTF8, "invalid UTF-8 in a string")
			}
			r.pos += size
		}
	}
}

// escape decodes the escape sequence at pos (a backslash), appending its UTF-8 to out.
// Up to 12 bytes from pos must be in the buffer if the input has them.
func (r *Reader) escape(out []byte) ([]byte, error) {
	b := r.buf[r.pos:]
	if len(b) < 2 {
		return nil, r.errorf("unterminated escape")
	}
	var c byte
	switch b[1] {
	case '"', '\\', '/':
		c = b[1]
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		return r.unicodeEscape(out, b)
	default:
		return nil, r.errorf("invalid escape \\%c", b[1])
	}
	r.pos += 2
	return append(out, c), nil
}

// unicodeEscape decodes \uXXXX, or a surrogate pair \uD8XX\uDCXX, at the start of b.
func (r *Reader) unicodeEscape(out, b []byte) ([]byte, error) {
	u, ok := hex4(b[2:])
	if !ok {
		return nil, r.errorf("invalid \\u escape")
	}
	n, rn := 6, rune(u)
	switch {
	case u >= 0xd800 && u < 0xdc00:
		if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
			return nil, r.failf(ErrUTF8, "lone surrogate \\u%04x", u)
		}
		lo, ok := hex4(b[8:])
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return nil, r.failf(ErrUTF8, "lone surrogate \\u%04x", u)
		}
		n, rn = 12, utf16.DecodeRune(rn, rune(lo))
	case u >= 0xdc00 && u <= 0xdfff:
		return nil, r.failf(ErrUTF8, "lone surrogate \\u%04x", u)
	}
	r.pos += n
	return utf8.AppendRune(out, rn), nil
}

// hex4 decodes four hex digits, either case, at the start of b.
func hex4(b []byte) (uint16, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var u uint16
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(c)
	}
	return u, true
}

// special marks the bytes a string scan stops at: the closing quote, the escape
// character, control characters and the bytes of multi-byte UTF-8.
var special = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80
	}
	return t
}()

// ScanPlain returns the index of the first special byte of b (a quote, a backslash, a
// control character or a byte of multi-byte UTF-8), or len(b). It tests eight
// bytes at a time: hex, base64 and most text have none.
func ScanPlain(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		// A high bit is set in a lane that is below 0x20, is 0x80 or above, or is zero
		// after the XOR (the quote or the backslash). Lanes past the first hit may be
		// wrong, so the byte loop below finds the exact index.
		if ((w-ones*0x20)&^w|w|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if special[b[i]] {
			return i
		}
	}
	return i
}

// Number reads the next value, which must be a number, and returns its text as written.
// The text is valid until the next call.
func (r *Reader) Number() ([]byte, error) {
	if _, err := r.next(); err != nil {
		return nil, err
	}
	start := r.pos
	for {
		for r.pos < len(r.buf) && numberByte[r.buf[r.pos]] {
			r.pos++
		}
		if r.MaxToken > 0 && r.pos-start > r.MaxToken {
			return nil, r.errorf("number longer than %d bytes", r.MaxToken)
		}
		if r.pos < len(r.buf) {
			break
		}
		shift, more, err := r.fill(start)
		start -= shift
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	text := r.buf[start:r.pos]
	if !validNumber(text) {
		r.pos = start
		return nil, r.errorf("invalid number %.40q", text)
	}
	return text, nil
}

// numberByte marks the bytes a number literal is made of.
var numberByte = func() (t [256]bool) {
	for _, c := range "0123456789+-.eE" {
		t[c] = true
	}
	return t
}()

// validNumber reports whether b is exactly one number by the JSON grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(b)
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
