package canonical

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// form is one canonical serialization: how it writes strings and numbers, and how it
// orders object keys. The walk over the value is the same for both.
type form struct {
	str     func(out []byte, s string) []byte
	num     func(out []byte, n *node) ([]byte, error)
	compare func(a, b string) int
}

// jcs is RFC 8785; receipt is the receipt payload form (Python's sorted json.dumps).
var (
	jcs     = form{str: AppendString, num: appendJCSNumber, compare: compareUTF16}
	receipt = form{str: appendASCIIString, num: appendReceiptNumber, compare: strings.Compare} // code point order is UTF-8 byte order
)

// append appends n in form f to out.
func (f *form) append(out []byte, n *node) ([]byte, error) {
	switch n.kind {
	case kindNull:
		return append(out, "null"...), nil
	case kindFalse:
		return append(out, "false"...), nil
	case kindTrue:
		return append(out, "true"...), nil
	case kindString:
		return f.str(out, n.text), nil
	case kindNumber:
		return f.num(out, n)
	case kindArray:
		out = append(out, '[')
		for i := range n.elems {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = f.append(out, &n.elems[i]); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	default: // kindObject
		slices.SortFunc(n.members, func(a, b member) int { return f.compare(a.key, b.key) })
		out = append(out, '{')
		for i := range n.members {
			m := &n.members[i]
			if i > 0 {
				if n.members[i-1].key == m.key {
					return nil, invalidf("duplicate object key %q", m.key)
				}
				out = append(out, ',')
			}
			out = f.str(out, m.key)
			out = append(out, ':')
			var err error
			if out, err = f.append(out, &m.val); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	}
}

// compareUTF16 orders valid UTF-8 strings as their UTF-16 encodings compare code unit by
// code unit (RFC 8785 section 3.2.3). That is code point order except that a character
// beyond the BMP, encoded as a surrogate pair starting D800–DBFF, sorts before the BMP
// characters U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	// Up to the first byte that differs the strings are the same; if either differing
	// byte is ASCII, both are at the start of a character (a valid continuation byte never
	// follows where the other string has ASCII) and bytes order as code units do.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		return cmp.Compare(a[i], b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) { // back to the start of the character they differ in
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra > 0xffff && rb > 0xffff {
		return cmp.Compare(ra, rb)
	}
	return cmp.Compare(firstUnit(ra), firstUnit(rb))
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r > 0xffff {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// AppendString appends s as an RFC 8785 string: only '"', '\\' and control characters
// are escaped, everything else is kept as UTF-8. s must be valid UTF-8.
func AppendString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		out = appendShortEscape(out, c)
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// appendShortEscape writes the escape of '"', '\\' or a control character below 0x20.
func appendShortEscape(out []byte, c byte) []byte {
	switch c {
	case '"':
		return append(out, '\\', '"')
	case '\\':
		return append(out, '\\', '\\')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	default:
		return appendUnitEscape(out, uint16(c))
	}
}

// appendUnitEscape writes \uxxxx with lowercase hex.
func appendUnitEscape(out []byte, u uint16) []byte {
	return append(out, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
}

// appendJCSNumber writes a number as ECMAScript writes the double it denotes.
func appendJCSNumber(out []byte, n *node) ([]byte, error) {
	if n.integer {
		digits := strings.TrimPrefix(n.text, "-")
		// The grammar rules out leading zeros, so more than 16 digits is beyond 2^53−1.
		v, err := strconv.ParseUint(digits, 10, 64)
		if len(digits) > 16 || err != nil || v > maxSafeInteger {
			return nil, invalidf("integer %s is beyond ±(2^53−1) and would be rounded", abbreviate(n.text))
		}
		if v == 0 {
			return append(out, '0'), nil
		}
		return append(out, n.text...), nil
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, invalidf("number %s is not a finite double", abbreviate(n.text))
	}
	// Every double above 2^53−1 is an integer, and ECMAScript writes those below 1e21 as
	// plain integer literals, which this function refuses; refuse the input too, so that
	// Transform always accepts its own output.
	if a := math.Abs(f); a > maxSafeInteger && a < 1e21 {
		return nil, invalidf("number %s is an integer beyond ±(2^53−1) once serialized", abbreviate(n.text))
	}
	return appendES(out, f), nil
}

// appendES writes a finite double as ECMAScript's Number.prototype.toString does
// (ECMA-262 Number::toString with radix 10): the shortest digits that round-trip, in plain
// notation when the decimal exponent is in [-7, 21), in exponent notation otherwise.
func appendES(out []byte, f float64) []byte {
	if f == 0 {
		return append(out, '0') // also for -0
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits as d.ddde±XX.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	mark := slices.Index(e, 'e')
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	var digits [24]byte
	d := append(digits[:0], e[0])
	if mark > 1 {
		d = append(d, e[2:mark]...)
	}
	k := len(d)
	point := exp + 1 // the value is 0.d × 10^point
	switch {
	case k <= point && point <= 21:
		out = append(out, d...)
		for range point - k {
			out = append(out, '0')
		}
	case 0 < point && point <= 21:
		out = append(out, d[:point]...)
		out = append(out, '.')
		out = append(out, d[point:]...)
	case -6 < point && point <= 0:
		out = append(out, '0', '.')
		for range -point {
			out = append(out, '0')
		}
		out = append(out, d...)
	default:
		out = append(out, d[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, d[1:]...)
		}
		out = append(out, 'e')
		if point-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(point-1), 10)
	}
	return out
}

// appendReceiptNumber appends an integer as its exact decimal digits; the receipt form
// has no other numbers.
func appendReceiptNumber(out []byte, n *node) ([]byte, error) {
	if !n.integer {
		return nil, invalidf("number %s is not an integer; the receipt form has integers only", abbreviate(n.text))
	}
	if n.text == "-0" {
		return append(out, '0'), nil
	}
	return append(out, n.text...), nil
}

// appendASCIIString escapes as Python's json module does with ensure_ascii=True: printable
// ASCII other than '"' and '\\' stays, everything else becomes an escape.
func appendASCIIString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		out = append(out, s[start:i]...)
		if c < utf8.RuneSelf {
			out = appendShortEscape(out, c)
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				out = appendUnitEscape(out, uint16(hi))
				out = appendUnitEscape(out, uint16(lo))
			} else {
				out = appendUnitEscape(out, uint16(r))
			}
			i += size
		}
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// abbreviate shortens a number literal for an error message.
func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
