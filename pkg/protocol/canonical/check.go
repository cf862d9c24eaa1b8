package canonical

import (
	"bytes"
	"errors"
	"sync"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// Check returns nil exactly when in is its own RFC 8785 form: when Transform(in) succeeds
// and returns in unchanged. Otherwise the error wraps ErrInvalid and says what is not
// canonical: whitespace, a key out of order or repeated, an escape JCS does not write,
// invalid UTF-8, a number not as ECMAScript writes it, or anything Transform refuses.
//
// It reads in once and builds no value, so it costs little more than scanning the bytes.
func Check(in []byte) error {
	return check(in, maxDepth, nil, nil)
}

// CheckObject is Check for a text that must be one JSON object nested at most depth
// levels (the object itself is level 1; depth is at most Check's limit of 1000). In the
// same pass it sets values[i], for each of the object's members named names[i] whose
// value is a string, to the decoded text, which aliases in or is a fresh copy; the other
// values are left as they were. A caller that needs a few members of a canonical object
// reads them without a second pass.
func CheckObject(in []byte, depth int, names []string, values [][]byte) error {
	if len(in) == 0 || in[0] != '{' {
		return invalidf("not a JSON object")
	}
	return check(in, min(depth, maxDepth), names, values[:len(names)])
}

// check is Check with a nesting limit, setting values for the top-level string members
// named names: the fast path (fastCheck) when it can tell, and otherwise checkSlow.
func check(in []byte, depth int, names []string, values [][]byte) error {
	if fastCheck(in, depth, names, values) {
		return nil
	}
	return checkSlow(in, depth, names, values)
}

// checkSlow is check with the tokenizer, for every text.
func checkSlow(in []byte, depth int, names []string, values [][]byte) error {
	c := checkers.Get().(*checker)
	defer checkers.Put(c)
	c.rd.ResetBytes(in)
	c.rd.MaxDepth = depth
	c.rd.RefuseSpace = true
	c.data, c.names, c.values = in, names, values
	err := c.value()
	if err == nil {
		err = c.rd.End()
	}
	c.data, c.names, c.values = nil, nil, nil
	if err != nil && !errors.Is(err, ErrInvalid) {
		err = invalid(err)
	}
	return err
}

// checkers keeps checkers and their readers for reuse: Check runs once per entry of an
// export.
var checkers = sync.Pool{New: func() any { return &checker{rd: jsonread.NewBytes(nil)} }}

// checker walks a text with the tokenizer, which refuses whitespace, and compares each
// token with what RFC 8785 writes for it.
type checker struct {
	rd     *jsonread.Reader
	data   []byte
	names  []string // top-level members whose string values are wanted
	values [][]byte // where they go
	buf    []byte   // the canonical text of an escaped string
}

func (c *checker) value() error {
	k, err := c.rd.Peek()
	if err != nil {
		return err
	}
	switch k {
	case jsonread.Object:
		return c.object()
	case jsonread.Array:
		if err := c.rd.Begin(k); err != nil {
			return err
		}
		for {
			more, err := c.rd.More()
			if err != nil || !more {
				return err
			}
			if err := c.value(); err != nil {
				return err
			}
		}
	case jsonread.String:
		return c.str()
	case jsonread.Number:
		return c.number()
	case jsonread.True, jsonread.False, jsonread.Null:
		return c.rd.Literal(k)
	}
	return invalidf("unexpected character at offset %d", c.rd.Offset())
}

func (c *checker) object() error {
	if err := c.rd.Begin(jsonread.Object); err != nil {
		return err
	}
	var prev []byte
	prevEscaped := false
	for {
		at := c.rd.Offset()
		key, ok, err := c.rd.Key()
		if err != nil || !ok {
			return err
		}
		if len(c.data) > int(at) && c.data[at] == ',' {
			at++
		}
		// The key's text as written: the tokenizer decoded it, so it is checked here to
		// be as RFC 8785 writes it.
		raw := c.data[at : c.rd.Offset()-1] // quotes included, ':' excluded
		escaped := bytes.IndexByte(raw, '\\') >= 0
		if escaped && !bytes.Equal(raw, AppendString(nil, string(key))) {
			return invalidf("key at offset %d has an escape RFC 8785 does not write", at)
		}
		key = raw[1 : len(raw)-1]
		if prev != nil {
			switch order := compareKeys(prev, key, prevEscaped || escaped); {
			case order == 0:
				return invalidf("duplicate object key at offset %d", at)
			case order > 0:
				return invalidf("object key at offset %d is out of order", at)
			}
		}
		if len(c.names) > 0 && c.rd.Depth() == 1 {
			name := key // the raw text, which is the name when it has no escape
			if escaped {
				name = []byte(unescape(key))
			}
			if err := c.topMember(name); err != nil {
				return err
			}
		} else if err := c.value(); err != nil {
			return err
		}
		prev, prevEscaped = key, escaped
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

// topMember checks the value of a top-level member and keeps it if it is a wanted
// string.
func (c *checker) topMember(name []byte) error {
	if k, err := c.rd.Peek(); err != nil || k != jsonread.String {
		return c.value()
	}
	at := c.rd.Offset()
	if err := c.str(); err != nil {
		return err
	}
	raw := c.data[at+1 : c.rd.Offset()-1]
	for i, n := range c.names {
		if n != string(name) {
			continue
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			c.values[i] = raw
		} else {
			c.values[i] = []byte(unescape(raw))
		}
	}
	return nil
}

// str checks a string value: its text as written must be what AppendString writes for
// the text the tokenizer decoded.
func (c *checker) str() error {
	at := c.rd.Offset()
	v, escaped, err := c.rd.String()
	if err != nil || !escaped {
		return err // without escapes, the decoded text is the written text
	}
	c.buf = AppendString(c.buf[:0], string(v))
	if !bytes.Equal(c.data[at:c.rd.Offset()], c.buf) {
		return invalidf("string at offset %d has an escape RFC 8785 does not write", at)
	}
	return nil
}

// number checks a number literal: an integer as JCS writes it, or else exactly what
// appendJCSNumber writes for it.
func (c *checker) number() error {
	at := c.rd.Offset()
	text, err := c.rd.Number()
	if err != nil {
		return err
	}
	integer := !bytes.ContainsAny(text, ".eE")
	if integer && len(text) <= 15 && string(text) != "-0" {
		return nil // the grammar refused leading zeros; 15 digits are below 2^53
	}
	var buf [32]byte
	out, err := appendJCSNumber(buf[:0], &node{kind: kindNumber, integer: integer, text: string(text)})
	if err != nil {
		return err
	}
	if !bytes.Equal(out, text) {
		return invalidf("number at offset %d is not as RFC 8785 writes it", at)
	}
	return nil
}
