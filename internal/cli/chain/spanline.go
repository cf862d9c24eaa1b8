package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file decodes the lines of `cairn chain seal`. encoding/json took more time than
// sealing them, so a line in the usual form is read by a small scanner instead, and any
// other line (escapes in a string, a member twice or in other case, null, a number
// encoding/json would refuse, invalid JSON, ...) by encoding/json as before. The scanner
// gives exactly encoding/json's result for the lines it takes, and declines the rest;
// TestDecodeSpanLineFastAgrees and FuzzDecodeSpanLineFastAgrees hold it to that.

// decodeSpanLine decodes one span; the times may be JSON strings or numbers.
func decodeSpanLine(raw []byte) (protocol.SpanBody, error) {
	if body, ok := decodeSpanLineFast(raw); ok {
		return body, nil
	}
	return decodeSpanLineJSON(raw)
}

// decodeSpanLineJSON is decodeSpanLine with encoding/json: the definition of what a line
// may hold. Members are matched as encoding/json matches them (in any case; a member
// given twice keeps its last value, attributes merged), and bytes after the object are
// not read.
func decodeSpanLineJSON(raw []byte) (protocol.SpanBody, error) {
	var line struct {
		protocol.SpanBody
		StartTimeNS json.RawMessage `json:"start_time_ns"`
		EndTimeNS   json.RawMessage `json:"end_time_ns"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&line); err != nil {
		return protocol.SpanBody{}, err
	}
	body := line.SpanBody
	for _, t := range []struct {
		name string
		raw  json.RawMessage
		dst  *int64
	}{{"start_time_ns", line.StartTimeNS, &body.StartTimeNS}, {"end_time_ns", line.EndTimeNS, &body.EndTimeNS}} {
		n, ok := parseSpanTime(t.raw)
		if !ok {
			return protocol.SpanBody{}, fmt.Errorf("%s %s is not a decimal number of nanoseconds", t.name, t.raw)
		}
		*t.dst = n
	}
	return body, nil
}

// parseSpanTime reads a time member's JSON text: a decimal number of nanoseconds, quoted
// or not.
func parseSpanTime(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
	return n, err == nil && n >= 0
}

// maxFastDepth is how deeply the scanner nests attribute values before it declines.
const maxFastDepth = 64

// spanScanner reads one line's JSON for decodeSpanLineFast; a method that returns false
// declines the line.
type spanScanner struct {
	in []byte
	i  int
}

// decodeSpanLineFast decodes a line that is one JSON object holding each member of a span
// at most once, named in lower case, the string members as strings, the times as strings
// or numbers, with no escape sequence in any string. It reports false for any other line.
func decodeSpanLineFast(raw []byte) (body protocol.SpanBody, ok bool) {
	s := spanScanner{in: raw}
	if !s.consume('{') {
		return body, false
	}
	var seen [9]bool
	strs := [...]*string{&body.Name, &body.Kind, &body.StatusCode, &body.StatusDescription, &body.TraceID, &body.SpanID}
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return body, false
		}
		slot := spanMemberSlot(key)
		if slot < 0 || seen[slot] {
			return body, false
		}
		seen[slot] = true
		switch {
		case slot < len(strs):
			v, ok := s.str()
			if !ok {
				return body, false
			}
			*strs[slot] = string(v)
		case slot == 6:
			if !s.consume('{') {
				return body, false
			}
			if body.Attributes, ok = s.object(1); !ok {
				return body, false
			}
		case slot == 7:
			if body.StartTimeNS, ok = s.time(); !ok {
				return body, false
			}
		default:
			if body.EndTimeNS, ok = s.time(); !ok {
				return body, false
			}
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return body, false
		}
	}
	// Bytes after the object are not read, as encoding/json's Decoder does not read them.
	return body, seen[7] && seen[8]
}

// spanMemberSlot numbers the members of a span line: the string members in the order
// decodeSpanLineFast lists them, then attributes, start_time_ns and end_time_ns; -1 for
// any other key.
func spanMemberSlot(key []byte) int {
	for i, name := range [...]string{"name", "kind", "status_code", "status_description", "trace_id", "span_id",
		"attributes", "start_time_ns", "end_time_ns"} {
		if string(key) == name {
			return i
		}
	}
	return -1
}

// skipSpace skips JSON whitespace.
func (s *spanScanner) skipSpace() {
	for s.i < len(s.in) {
		switch s.in[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *spanScanner) consume(c byte) bool {
	s.skipSpace()
	if s.i < len(s.in) && s.in[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string with no escape sequence and no control character, in valid UTF-8,
// and returns its contents.
func (s *spanScanner) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.in); s.i++ {
		switch c := s.in[s.i]; {
		case c == '"':
			v := s.in[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// time reads a time member: a string or number that parseSpanTime takes.
func (s *spanScanner) time() (int64, bool) {
	s.skipSpace()
	start := s.i
	if s.i < len(s.in) && s.in[s.i] == '"' {
		if _, ok := s.str(); !ok {
			return 0, false
		}
	} else if _, ok := s.number(); !ok {
		return 0, false
	}
	return parseSpanTime(s.in[start:s.i])
}

// number reads a JSON number and returns it as encoding/json decodes one into an any: a
// float64, which must be finite.
func (s *spanScanner) number() (float64, bool) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.in) && s.in[s.i] >= '0' && s.in[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.in) && s.in[s.i] == '-' {
		s.i++
	}
	switch n := digits(); {
	case n == 0, n > 1 && s.in[s.i-n] == '0':
		return 0, false
	}
	if s.i < len(s.in) && s.in[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return 0, false
		}
	}
	if s.i < len(s.in) && (s.in[s.i] == 'e' || s.in[s.i] == 'E') {
		s.i++
		if s.i < len(s.in) && (s.in[s.i] == '+' || s.in[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(s.in[start:s.i]), 64)
	return f, err == nil
}

// value reads any JSON value as encoding/json decodes it into an any, at the given depth.
func (s *spanScanner) value(depth int) (any, bool) {
	s.skipSpace()
	if s.i >= len(s.in) {
		return nil, false
	}
	switch c := s.in[s.i]; {
	case c == '"':
		v, ok := s.str()
		return string(v), ok
	case c == '{':
		s.i++
		m, ok := s.object(depth + 1)
		return m, ok
	case c == '[':
		s.i++
		return s.array(depth + 1)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	for _, lit := range [...]struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(s.in[s.i:], []byte(lit.text)) {
			s.i += len(lit.text)
			return lit.v, true
		}
	}
	return nil, false
}

// object reads the members of an object whose '{' has been read, as a map; a key given
// twice keeps its last value, as with encoding/json.
func (s *spanScanner) object(depth int) (map[string]any, bool) {
	var m map[string]any
	if depth == 1 {
		m = make(map[string]any, 16) // the attributes: growing from the small map costs more
	} else {
		m = map[string]any{}
	}
	if depth > maxFastDepth {
		return nil, false
	}
	if s.consume('}') {
		return m, true
	}
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return nil, false
		}
		v, ok := s.value(depth)
		if !ok {
			return nil, false
		}
		m[string(key)] = v
		if s.consume('}') {
			return m, true
		}
		if !s.consume(',') {
			return nil, false
		}
	}
}

// array reads the elements of an array whose '[' has been read.
func (s *spanScanner) array(depth int) ([]any, bool) {
	a := []any{}
	if depth > maxFastDepth {
		return nil, false
	}
	if s.consume(']') {
		return a, true
	}
	for {
		v, ok := s.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if s.consume(']') {
			return a, true
		}
		if !s.consume(',') {
			return nil, false
		}
	}
}
