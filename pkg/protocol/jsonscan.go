package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file reads the few members of a canonical body that verification compares with
// the entry's columns, without decoding the rest. It is on the hot path of export
// verification, where encoding/json would cost several times the hashing.

// MaxBodyNesting bounds how deeply a canonical body may nest objects and arrays, counting
// the body object as level 0 and its attributes object as level 1: CheckEntry refuses an
// entry whose body nests a value deeper. Canonical JSON alone allows more, so code that
// builds bodies from nested input (OTLP's kvlist and array values) must stop at this.
const MaxBodyNesting = 512

var errSyntax = errors.New("invalid JSON")

// bodyColumns are the members of a span body that an entry repeats as columns.
type bodyColumns struct {
	name, kind, startTimeNS, traceID, spanID []byte
}

// readBodyColumns parses body, which must be one JSON object, and returns its name, kind,
// start_time_ns, trace_id and span_id members, each of which must be a string.
func readBodyColumns(body []byte) (bodyColumns, error) {
	var cols bodyColumns
	s := byteScanner{b: body}
	var seen [5]bool
	err := s.members(func(key []byte) error {
		var dst *[]byte
		var slot int
		switch string(key) {
		case "name":
			dst, slot = &cols.name, 0
		case "kind":
			dst, slot = &cols.kind, 1
		case "start_time_ns":
			dst, slot = &cols.startTimeNS, 2
		case "trace_id":
			dst, slot = &cols.traceID, 3
		case "span_id":
			dst, slot = &cols.spanID, 4
		default:
			return s.skipValue(1)
		}
		if seen[slot] {
			return fmt.Errorf("duplicate member %q", key)
		}
		seen[slot] = true
		if c, err := s.nonSpace(); err != nil || c != '"' {
			return fmt.Errorf("member %q must be a string", key)
		}
		var err error
		*dst, err = s.readString()
		return err
	})
	if err != nil {
		return cols, err
	}
	if !s.atEnd() {
		return cols, fmt.Errorf("%w: data after the body object", errSyntax)
	}
	for i, ok := range seen {
		if !ok {
			return cols, fmt.Errorf("body has no %q member", [...]string{"name", "kind", "start_time_ns", "trace_id", "span_id"}[i])
		}
	}
	return cols, nil
}

// byteScanner walks a JSON text held in memory.
type byteScanner struct {
	b []byte
	i int
}

// nonSpace skips whitespace and returns the next byte without consuming it.
func (s *byteScanner) nonSpace() (byte, error) {
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: unexpected end", errSyntax)
}

// atEnd reports whether only whitespace is left.
func (s *byteScanner) atEnd() bool {
	for ; s.i < len(s.b); s.i++ {
		if c := s.b[s.i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func (s *byteScanner) expect(want byte) error {
	c, err := s.nonSpace()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("%w: at byte %d: got %q, want %q", errSyntax, s.i, c, want)
	}
	s.i++
	return nil
}

// stringSpecial marks the bytes a JSON string scan must stop at: the closing quote, the
// escape character, control characters (which must be escaped) and non-ASCII bytes
// (whose UTF-8 must be checked).
var stringSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80
	}
	return t
}()

// readString reads a string starting at the next non-space byte and returns its value:
// a sub-slice of the input when it has no escapes, a decoded copy otherwise.
func (s *byteScanner) readString() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start, escaped, ascii := s.i, false, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !stringSpecial[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if escaped {
				var v string
				if err := json.Unmarshal(s.b[start-1:s.i], &v); err != nil {
					return nil, fmt.Errorf("%w: %w", errSyntax, err)
				}
				return []byte(v), nil
			}
			if !ascii && !utf8.Valid(raw) {
				return nil, fmt.Errorf("%w: string is not valid UTF-8", errSyntax)
			}
			return raw, nil
		case c == '\\':
			escaped = true
			s.i += 2 // the escaped byte cannot end the string
		case c >= 0x80:
			ascii = false
			s.i++
		default:
			return nil, fmt.Errorf("%w: control character in string", errSyntax)
		}
	}
	return nil, fmt.Errorf("%w: unterminated string", errSyntax)
}

// skipString consumes a string without decoding or validating its contents: values that
// are not compared with a column are bound by the body hash and need no more than their
// extent. It finds the closing quote with a vectorized search.
func (s *byteScanner) skipString() error {
	s.i++ // the opening quote
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return fmt.Errorf("%w: unterminated string", errSyntax)
		}
		if k := bytes.IndexByte(s.b[s.i:s.i+j], '\\'); k >= 0 {
			s.i += k + 2 // an escape; the escaped byte cannot end the string
			continue
		}
		s.i += j + 1
		return nil
	}
}

// skipValue consumes one JSON value. Strings are skipped by skipString; the structure
// around them is checked.
func (s *byteScanner) skipValue(depth int) error {
	if depth > MaxBodyNesting {
		return fmt.Errorf("%w: nested deeper than %d", errSyntax, MaxBodyNesting)
	}
	c, err := s.nonSpace()
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		return s.skipContainer(c, depth)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return fmt.Errorf("%w: unexpected %q at byte %d", errSyntax, c, s.i)
}

func (s *byteScanner) skipContainer(open byte, depth int) error {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.i++ // the opening bracket
	if c, err := s.nonSpace(); err != nil || c == closer {
		s.i++
		return err
	}
	for {
		if open == '{' { // a key: skipped like any string, then its colon
			if c, err := s.nonSpace(); err != nil || c != '"' {
				return fmt.Errorf("%w: at byte %d: want a member name", errSyntax, s.i)
			}
			if err := s.skipString(); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
		}
		if err := s.skipValue(depth + 1); err != nil {
			return err
		}
		if done, err := s.separator(closer); done || err != nil {
			return err
		}
	}
}

// members reads an object, calling member after each key and its colon; member must
// consume the value.
func (s *byteScanner) members(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if c, err := s.nonSpace(); err != nil || c == '}' {
		s.i++
		return err
	}
	for {
		key, err := s.readString()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if done, err := s.separator('}'); done || err != nil {
			return err
		}
	}
}

// separator consumes ',' (more to come) or closer (done).
func (s *byteScanner) separator(closer byte) (done bool, err error) {
	c, err := s.nonSpace()
	if err != nil {
		return false, err
	}
	s.i++
	switch c {
	case ',':
		return false, nil
	case closer:
		return true, nil
	}
	return false, fmt.Errorf("%w: at byte %d: got %q, want ',' or %q", errSyntax, s.i-1, c, closer)
}

func (s *byteScanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return fmt.Errorf("%w: bad literal at byte %d", errSyntax, s.i)
	}
	s.i += len(word)
	return nil
}

// number consumes a number, checking it against JSON's grammar.
func (s *byteScanner) number() error {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		s.i++
	}
	if !json.Valid(s.b[start:s.i]) {
		return fmt.Errorf("%w: bad number %q", errSyntax, s.b[start:s.i])
	}
	return nil
}
