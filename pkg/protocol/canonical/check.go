package canonical

import (
	"bytes"
	"unicode/utf8"
)

// Check returns nil exactly when in is its own RFC 8785 form: when Transform(in) succeeds
// and returns in unchanged. Otherwise the error wraps ErrInvalid and says what is not
// canonical: whitespace, a key out of order or repeated, an escape JCS does not write,
// invalid UTF-8, a number not as ECMAScript writes it, or anything Transform refuses.
//
// It reads in once and builds no value, so it costs little more than scanning the bytes.
func Check(in []byte) error {
	c := checker{data: in}
	if err := c.value(0); err != nil {
		return err
	}
	if c.pos != len(in) {
		return invalidf("data after the JSON value at offset %d", c.pos)
	}
	return nil
}

type checker struct {
	data []byte
	pos  int
}

func (c *checker) peek() byte {
	if c.pos < len(c.data) {
		return c.data[c.pos]
	}
	return 0
}

func (c *checker) value(depth int) error {
	switch b := c.peek(); {
	case b == '{':
		return c.object(depth + 1)
	case b == '[':
		return c.array(depth + 1)
	case b == '"':
		_, err := c.str()
		return err
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case c.pos >= len(c.data):
		return invalidf("unexpected end of input")
	default:
		return invalidf("unexpected character %q at offset %d (canonical JSON has no whitespace)", b, c.pos)
	}
}

func (c *checker) literal(word string) error {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return invalidf("invalid literal at offset %d", c.pos)
	}
	c.pos += len(word)
	return nil
}

func (c *checker) array(depth int) error {
	if depth > maxDepth {
		return invalidf("nesting deeper than %d levels at offset %d", maxDepth, c.pos)
	}
	c.pos++ // '['
	if c.peek() == ']' {
		c.pos++
		return nil
	}
	for {
		if err := c.value(depth); err != nil {
			return err
		}
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			return nil
		default:
			return invalidf("want , or ] at offset %d", c.pos)
		}
	}
}

func (c *checker) object(depth int) error {
	if depth > maxDepth {
		return invalidf("nesting deeper than %d levels at offset %d", maxDepth, c.pos)
	}
	c.pos++ // '{'
	if c.peek() == '}' {
		c.pos++
		return nil
	}
	var prev []byte
	prevEscaped := false
	for {
		if c.peek() != '"' {
			return invalidf("want a key at offset %d", c.pos)
		}
		start := c.pos
		escaped, err := c.str()
		if err != nil {
			return err
		}
		key := c.data[start+1 : c.pos-1]
		if prev != nil {
			switch order := compareKeys(prev, key, prevEscaped || escaped); {
			case order == 0:
				return invalidf("duplicate object key at offset %d", start)
			case order > 0:
				return invalidf("object key at offset %d is out of order", start)
			}
		}
		prev, prevEscaped = key, escaped
		if c.peek() != ':' {
			return invalidf("want : at offset %d", c.pos)
		}
		c.pos++
		if err := c.value(depth); err != nil {
			return err
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return nil
		default:
			return invalidf("want , or } at offset %d", c.pos)
		}
	}
}

// compareKeys orders two keys, each the canonical text of a string, as RFC 8785 orders
// their values.
func compareKeys(a, b []byte, escaped bool) int {
	if !escaped {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		// UTF-8 byte order is code point order, which is UTF-16 order except for a
		// character beyond the BMP (lead byte F0–F4) against U+E000–U+FFFF (EE, EF).
		if i == len(a) || i == len(b) || (a[i] < 0xee && b[i] < 0xee) {
			return bytes.Compare(a, b)
		}
		return compareUTF16(string(a), string(b))
	}
	return compareUTF16(unescape(a), unescape(b))
}

// unescape decodes the canonical text of a string: its escapes are the short ones and
// \u00xx.
func unescape(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			out = append(out, unhex(s[i+3])<<4|unhex(s[i+4]))
			i += 4
		default: // '"' or '\\'
			out = append(out, s[i])
		}
	}
	return string(out)
}

func unhex(b byte) byte {
	if b >= 'a' {
		return b - 'a' + 10
	}
	return b - '0'
}

// plainASCII marks the bytes a canonical string holds as they are.
var plainASCII = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// str checks a string starting at its opening quote and says whether it holds an escape.
func (c *checker) str() (bool, error) {
	start := c.pos
	c.pos++
	escaped := false
	d := c.data
	for c.pos < len(d) {
		b := d[c.pos]
		switch {
		case plainASCII[b]:
			c.pos++
		case b == '"':
			c.pos++
			return escaped, nil
		case b == '\\':
			if c.pos+1 >= len(d) {
				return false, invalidf("unterminated string at offset %d", start)
			}
			escaped = true
			switch d[c.pos+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				c.pos += 2
			case 'u':
				// JCS writes \u only for a control character without a short escape,
				// as \u00xx in lowercase hex.
				if c.pos+6 > len(d) || d[c.pos+2] != '0' || d[c.pos+3] != '0' || (d[c.pos+4] != '0' && d[c.pos+4] != '1') || !isLowerHex(d[c.pos+5]) {
					return false, invalidf("escape at offset %d is not one RFC 8785 writes", c.pos)
				}
				switch unhex(d[c.pos+4])<<4 | unhex(d[c.pos+5]) {
				case '\b', '\f', '\n', '\r', '\t':
					return false, invalidf("escape at offset %d has a short form", c.pos)
				}
				c.pos += 6
			default:
				return false, invalidf("escape at offset %d is not one RFC 8785 writes", c.pos)
			}
		case b < 0x20:
			return false, invalidf("control character in a string at offset %d", c.pos)
		default:
			r, size := utf8.DecodeRune(d[c.pos:])
			if r == utf8.RuneError && size == 1 {
				return false, invalidf("invalid UTF-8 at offset %d", c.pos)
			}
			c.pos += size
		}
	}
	return false, invalidf("unterminated string at offset %d", start)
}

func isLowerHex(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

// number checks a number literal: an integer as JCS writes it, or else exactly what
// appendJCSNumber writes for it.
func (c *checker) number() error {
	start := c.pos
	d := c.data
	if d[c.pos] == '-' {
		c.pos++
	}
	switch {
	case c.pos < len(d) && d[c.pos] == '0':
		c.pos++
	case c.pos < len(d) && d[c.pos] >= '1' && d[c.pos] <= '9':
		c.digits()
	default:
		return invalidf("invalid number at offset %d", start)
	}
	integer := true
	if c.pos < len(d) && d[c.pos] == '.' {
		integer = false
		c.pos++
		if c.digits() == 0 {
			return invalidf("invalid number at offset %d", start)
		}
	}
	if c.pos < len(d) && (d[c.pos] == 'e' || d[c.pos] == 'E') {
		integer = false
		c.pos++
		if c.pos < len(d) && (d[c.pos] == '+' || d[c.pos] == '-') {
			c.pos++
		}
		if c.digits() == 0 {
			return invalidf("invalid number at offset %d", start)
		}
	}
	text := d[start:c.pos]
	var buf [32]byte
	out, err := appendJCSNumber(buf[:0], &node{kind: kindNumber, integer: integer, text: string(text)})
	if err != nil {
		return err
	}
	if !bytes.Equal(out, text) {
		return invalidf("number at offset %d is not as RFC 8785 writes it", start)
	}
	return nil
}

func (c *checker) digits() int {
	n := 0
	for c.pos < len(c.data) && c.data[c.pos] >= '0' && c.data[c.pos] <= '9' {
		c.pos++
		n++
	}
	return n
}
