package analysis

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// A regression run's time goes mostly to reading span bodies, and encoding/json builds
// every attribute of every body (about 12 µs a body here), so a 10,000-entry window
// would take well over the 50 ms issue 17 allows. windowFacts therefore reads the
// canonical form the chain stores (RFC 8785: no white space, no escapes in keys) with a
// small scanner that keeps only what FactsOf looks at, and hands anything else (white
// space, an escaped or repeated key, an unknown member, too deep a nesting, a malformed
// body) to DecodeBody and FactsOf, which decide. So the scanner never changes a result:
// where it answers, it answers what DecodeBody and FactsOf would (FuzzWindowFacts
// checks this).

// windowFacts returns the SpanFacts of a canonical body, as FactsOf(DecodeBody) would.
// attrs is scratch space, cleared first, so that a run allocates one map for all its
// entries.
func windowFacts(canonical []byte, attrs map[string]any) (SpanFacts, error) {
	if f, ok := scanFacts(canonical, attrs); ok {
		return f, nil
	}
	body, err := DecodeBody(canonical)
	if err != nil {
		return SpanFacts{}, err
	}
	return FactsOf(&body), nil
}

// maxScanDepth is the deepest nesting of attribute values the scanner follows.
const maxScanDepth = 32

// bodyMembers are the members of protocol.SpanBody's JSON.
var bodyMembers = [...]string{"name", "kind", "attributes", "status_code", "status_description",
	"start_time_ns", "end_time_ns", "trace_id", "span_id"}

// regressionAttrs are the attributes FactsOf reads.
var regressionAttrs = [...]string{AttrInputTokens, AttrPromptTokens, AttrOutputTokens, AttrCompletionTokens,
	AttrCostUSD, AttrCairnCostUSD, AttrResponseModel, AttrRequestModel, AttrCloudRegion}

// bodyScanner walks one canonical body. Every method reports false when the body is not
// in the form it reads; the caller then falls back to encoding/json.
type bodyScanner struct {
	b []byte
	i int
}

// scanFacts reads a body of exactly the members of protocol.SpanBody, each at most once.
func scanFacts(b []byte, attrs map[string]any) (SpanFacts, bool) {
	clear(attrs)
	s := bodyScanner{b: b}
	body := protocol.SpanBody{Attributes: attrs}
	var seen uint16 // a bit per member, in the order of bodyMembers
	if !s.take('{') {
		return SpanFacts{}, false
	}
	for first := true; !s.take('}'); first = false {
		if !first && !s.take(',') {
			return SpanFacts{}, false
		}
		key, ok := s.key()
		m := slices.Index(bodyMembers[:], string(key))
		if !ok || m < 0 || seen&(1<<m) != 0 {
			return SpanFacts{}, false
		}
		seen |= 1 << m
		switch string(key) {
		case "attributes":
			ok = s.attributes(body.Attributes)
		case "start_time_ns":
			body.StartTimeNS, ok = s.timeNS()
		case "end_time_ns":
			body.EndTimeNS, ok = s.timeNS()
		default: // the members of string type
			_, ok = s.str()
		}
		if !ok {
			return SpanFacts{}, false
		}
	}
	if s.i != len(s.b) {
		return SpanFacts{}, false
	}
	return FactsOf(&body), true
}

// take consumes c when it is next.
func (s *bodyScanner) take(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads a member name without escapes, and the colon after it.
func (s *bodyScanner) key() ([]byte, bool) {
	start := s.i
	plain, ok := s.str()
	if !ok || !plain || !s.take(':') {
		return nil, false
	}
	return s.b[start+1 : s.i-2], true
}

// str skips a string, checking its escapes; plain reports that it has neither escapes
// nor bytes beyond ASCII, so that its bytes are its value.
func (s *bodyScanner) str() (plain, ok bool) {
	if !s.take('"') {
		return false, false
	}
	plain = true
	for s.i < len(s.b) {
		for s.i < len(s.b) && plainByte[s.b[s.i]] { // the common case, in a tight loop
			s.i++
		}
		if s.i == len(s.b) {
			break
		}
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return plain, true
		case c < 0x20:
			return false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if s.i >= len(s.b) {
				return false, false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+4 > len(s.b) {
					return false, false
				}
				for _, h := range s.b[s.i : s.i+4] {
					if !isHex(h) {
						return false, false
					}
				}
				s.i += 4
			default:
				return false, false
			}
		}
	}
	return false, false
}

// timeNS reads a time as protocol.SpanBody holds it: a string of a decimal integer.
func (s *bodyScanner) timeNS() (int64, bool) {
	start := s.i
	plain, ok := s.str()
	text := string(s.b[start+1 : max(start+1, s.i-1)])
	if !ok || !plain || !isDecimal(text) {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil
}

// attributes reads the attributes object, keeping in attrs the values FactsOf reads as
// DecodeBody would give them.
func (s *bodyScanner) attributes(attrs map[string]any) bool {
	if !s.take('{') {
		return false
	}
	for first := true; !s.take('}'); first = false {
		if !first && !s.take(',') {
			return false
		}
		key, ok := s.key()
		if !ok {
			return false
		}
		a := slices.Index(regressionAttrs[:], string(key))
		start := s.i
		plain, ok := s.value(0)
		if !ok {
			return false
		}
		if a < 0 {
			continue
		}
		if _, dup := attrs[regressionAttrs[a]]; dup {
			return false
		}
		if attrs[regressionAttrs[a]], ok = decodeScanned(s.b[start:s.i], plain); !ok {
			return false
		}
	}
	return true
}

// value skips one JSON value; plain is str's, for a string.
func (s *bodyScanner) value(depth int) (plain, ok bool) {
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		s.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		for first := true; !s.take(end); first = false {
			if !first && !s.take(',') {
				return false, false
			}
			if c == '{' {
				if _, ok := s.str(); !ok || !s.take(':') {
					return false, false
				}
			}
			if _, ok := s.value(depth + 1); !ok {
				return false, false
			}
		}
		return false, true
	case c == '-' || '0' <= c && c <= '9':
		start := s.i
		for s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] == '+' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E' ||
			'0' <= s.b[s.i] && s.b[s.i] <= '9') {
			s.i++
		}
		return false, isDecimal(string(s.b[start:s.i]))
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return false, true
		}
	}
	return false, false
}

// decodeScanned gives a scanned value as DecodeBody would: a number as json.Number, a
// string as its text; any other value as false, which FactsOf reads as no count, no
// number and no string, as it does the maps, slices, booleans and nil DecodeBody gives.
func decodeScanned(raw []byte, plain bool) (any, bool) {
	switch {
	case raw[0] == '"' && plain:
		return string(raw[1 : len(raw)-1]), true
	case raw[0] == '"':
		var text string
		return text, json.Unmarshal(raw, &text) == nil
	case raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9':
		return json.Number(raw), true
	}
	return false, true
}

// plainByte marks the bytes a string holds as they are: ASCII, neither a control
// character nor '"' nor '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
