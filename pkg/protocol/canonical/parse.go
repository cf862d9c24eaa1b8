package canonical

import (
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects the parser accepts.
const maxDepth = 1000

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one parsed JSON value. Strings hold their unescaped text, which is always valid
// UTF-8; numbers hold their literal exactly as written, which matches the JSON grammar.
type node struct {
	kind    kind
	integer bool     // number literal has neither fraction nor exponent
	text    string   // string value or number literal
	elems   []node   // array elements
	members []member // object members, in input order until a writer sorts them
}

type member struct {
	key string
	val node
}

// parser is a recursive-descent parser of one JSON text (RFC 8259).
type parser struct {
	data  []byte
	pos   int
	depth int
}

// parse parses exactly one JSON value, with optional surrounding whitespace.
func parse(in []byte) (node, error) {
	p := parser{data: in}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return node{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return node{}, invalidf("data after the JSON value at offset %d", p.pos)
	}
	return v, nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (node, error) {
	if p.pos >= len(p.data) {
		return node{}, invalidf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return node{kind: kindString, text: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return node{kind: kindTrue}, p.literal("true")
	case c == 'f':
		return node{kind: kindFalse}, p.literal("false")
	case c == 'n':
		return node{kind: kindNull}, p.literal("null")
	default:
		return node{}, invalidf("unexpected character %q at offset %d", c, p.pos)
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return invalidf("invalid literal at offset %d", p.pos)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return invalidf("nesting deeper than %d levels at offset %d", maxDepth, p.pos)
	}
	return nil
}

func (p *parser) array() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	p.pos++ // '['
	n := node{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return n, nil
	}
	for {
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		n.elems = append(n.elems, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return node{}, invalidf("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return n, nil
		default:
			return node{}, invalidf("expected ',' or ']' at offset %d", p.pos)
		}
	}
}

func (p *parser) object() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	p.pos++ // '{'
	n := node{kind: kindObject}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return node{}, invalidf("expected an object key at offset %d", p.pos)
		}
		key, err := p.str()
		if err != nil {
			return node{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return node{}, invalidf("expected ':' at offset %d", p.pos)
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		n.members = append(n.members, member{key: key, val: v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return node{}, invalidf("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return n, nil
		default:
			return node{}, invalidf("expected ',' or '}' at offset %d", p.pos)
		}
	}
}

// number scans a number literal by the JSON grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps its text.
func (p *parser) number() (node, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.pos < len(p.data) && p.data[p.pos] >= '1' && p.data[p.pos] <= '9':
		p.digits()
	default:
		return node{}, invalidf("invalid number at offset %d", start)
	}
	integer := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		integer = false
		p.pos++
		if p.digits() == 0 {
			return node{}, invalidf("invalid number at offset %d", start)
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return node{}, invalidf("invalid number at offset %d", start)
		}
	}
	return node{kind: kindNumber, integer: integer, text: string(p.data[start:p.pos])}, nil
}

// digits consumes a run of ASCII digits and returns its length.
func (p *parser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// str parses a string literal starting at its opening quote and returns its unescaped
// value. Raw control characters, invalid UTF-8, bad escapes and unpaired surrogate escapes
// are errors.
func (p *parser) str() (string, error) {
	open := p.pos
	p.pos++
	start := p.pos
	var buf []byte // nil until the first escape
	for {
		if p.pos >= len(p.data) {
			return "", invalidf("unterminated string starting at offset %d", open)
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			var s string
			if buf == nil {
				s = string(p.data[start:p.pos])
			} else {
				s = string(append(buf, p.data[start:p.pos]...))
			}
			p.pos++
			return s, nil
		case c == '\\':
			buf = append(buf, p.data[start:p.pos]...)
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
			start = p.pos
		case c < 0x20:
			return "", invalidf("control character %#02x in string at offset %d", c, p.pos)
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", invalidf("invalid UTF-8 at offset %d", p.pos)
			}
			p.pos += size
		}
	}
}

// escape decodes the escape sequence at p.pos (a backslash) and appends its UTF-8 to buf.
func (p *parser) escape(buf []byte) ([]byte, error) {
	at := p.pos
	if p.pos+1 >= len(p.data) {
		return nil, invalidf("unterminated escape at offset %d", at)
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
	default:
		return nil, invalidf("invalid escape at offset %d", at)
	}
	u, ok := p.hex4()
	if !ok {
		return nil, invalidf("invalid \\u escape at offset %d", at)
	}
	r := rune(u)
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		// A high surrogate must be followed by an escaped low surrogate.
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return nil, invalidf("unpaired surrogate escape at offset %d", at)
		}
		p.pos += 2
		lo, ok := p.hex4()
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return nil, invalidf("unpaired surrogate escape at offset %d", at)
		}
		r = utf16.DecodeRune(r, rune(lo))
	case utf16.IsSurrogate(r):
		return nil, invalidf("unpaired surrogate escape at offset %d", at)
	}
	return utf8.AppendRune(buf, r), nil
}

// hex4 reads four hex digits.
func (p *parser) hex4() (uint16, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var u uint16
	for _, c := range p.data[p.pos : p.pos+4] {
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
	p.pos += 4
	return u, true
}
