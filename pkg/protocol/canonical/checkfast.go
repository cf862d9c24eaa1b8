package canonical

import (
	"bytes"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// This file is Check's fast path: one loop over the bytes that accepts the texts span
// bodies are made of (an object of ASCII keys without escapes in byte order, strings with
// the escapes RFC 8785 writes, short integers, literals, nested arrays and objects) and
// answers "not sure" for
// anything else, which the tokenizer-based checker then decides. It only ever accepts
// what that checker accepts: FuzzCheckAgreesWithTransform and FuzzFastCheckAgrees hold
// it to that. It checks an entry's body in about a third of the time.

// maxFastNames bounds how many members the fast path collects; with more, it stands aside.
const maxFastNames = 8

// fastChecker is the state of one fast check.
type fastChecker struct {
	in    []byte
	pos   int
	depth int // containers may nest below this level (the top-level object is level 1)
	names []string
	found [maxFastNames][2]int // the value's offsets in in, for each name found
}

// fastCheck reports whether in is certainly canonical JSON of the simple form above,
// one object nested less than depth levels. When it is, fastCheck sets values[i] as
// CheckObject does; otherwise it leaves values as they were.
func fastCheck(in []byte, depth int, names []string, values [][]byte) bool {
	if len(names) > maxFastNames || len(in) == 0 || in[0] != '{' {
		return false
	}
	f := fastChecker{in: in, depth: depth, names: names}
	if !f.object(1) || f.pos != len(in) {
		return false
	}
	for i := range names {
		if at := f.found[i]; at[1] != 0 {
			values[i] = in[at[0]:at[1]:at[1]]
		}
	}
	return true
}

// object checks the object at pos, at nesting level level.
func (f *fastChecker) object(level int) bool {
	if level >= f.depth {
		return false
	}
	f.pos++ // '{'
	if f.pos < len(f.in) && f.in[f.pos] == '}' {
		f.pos++
		return true
	}
	var prev []byte
	for {
		key, ok := f.key()
		// ASCII keys without escapes: their byte order is RFC 8785's UTF-16 order.
		if !ok || (prev != nil && bytes.Compare(prev, key) >= 0) {
			return false
		}
		prev = key
		if f.pos >= len(f.in) || f.in[f.pos] != ':' {
			return false
		}
		f.pos++
		if level == 1 && len(f.names) > 0 && f.pos < len(f.in) && f.in[f.pos] == '"' {
			start := f.pos + 1
			if ok, escaped := f.str(); !ok || escaped {
				return false // a wanted value with an escape is decoded by the slow path
			}
			for i, n := range f.names {
				if n == string(key) {
					f.found[i] = [2]int{start, f.pos - 1}
				}
			}
		} else if !f.value(level) {
			return false
		}
		if f.pos >= len(f.in) {
			return false
		}
		switch f.in[f.pos] {
		case ',':
			f.pos++
		case '}':
			f.pos++
			return true
		default:
			return false
		}
	}
}

// key reads a member name of ASCII without escapes or control characters, with its
// quotes, and returns it without them.
func (f *fastChecker) key() ([]byte, bool) {
	if f.pos >= len(f.in) || f.in[f.pos] != '"' {
		return nil, false
	}
	start := f.pos + 1
	end := start + jsonread.ScanPlain(f.in[start:])
	if end >= len(f.in) || f.in[end] != '"' {
		return nil, false // an escape, a control character or non-ASCII: the slow path orders it
	}
	f.pos = end + 1
	return f.in[start:end], true
}

// value checks the value at pos, inside a container at level level.
func (f *fastChecker) value(level int) bool {
	if f.pos >= len(f.in) {
		return false
	}
	switch c := f.in[f.pos]; {
	case c == '"':
		ok, _ := f.str()
		return ok
	case c == '{':
		return f.object(level + 1)
	case c == '[':
		return f.array(level + 1)
	case c == '-' || (c >= '0' && c <= '9'):
		return f.integer()
	case c == 't':
		return f.literal("true")
	case c == 'f':
		return f.literal("false")
	case c == 'n':
		return f.literal("null")
	}
	return false
}

// array checks the array at pos, at nesting level level.
func (f *fastChecker) array(level int) bool {
	if level >= f.depth {
		return false
	}
	f.pos++ // '['
	if f.pos < len(f.in) && f.in[f.pos] == ']' {
		f.pos++
		return true
	}
	for {
		if !f.value(level) || f.pos >= len(f.in) {
			return false
		}
		switch f.in[f.pos] {
		case ',':
			f.pos++
		case ']':
			f.pos++
			return true
		default:
			return false
		}
	}
}

// str checks a string of valid UTF-8 whose escapes are those RFC 8785 writes (see
// AppendString), and reports whether it has any.
func (f *fastChecker) str() (ok, escaped bool) {
	i := f.pos + 1
	for {
		i += jsonread.ScanPlain(f.in[i:])
		if i >= len(f.in) {
			return false, false
		}
		switch c := f.in[i]; {
		case c == '"':
			f.pos = i + 1
			return true, escaped
		case c == '\\':
			n := shortEscape(f.in[i:])
			if n == 0 {
				return false, false
			}
			i += n
			escaped = true
		case c < 0x20:
			return false, false
		default:
			r, size := utf8.DecodeRune(f.in[i:])
			if r == utf8.RuneError && size == 1 {
				return false, false
			}
			i += size
		}
	}
}

// shortEscape returns the length of the escape at the start of b if it is one that
// AppendString writes (\" \\ \b \f \n \r \t, or \u00xx in lowercase hex for another
// control character), and 0 otherwise.
func shortEscape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 || b[2] != '0' || b[3] != '0' || (b[4] != '0' && b[4] != '1') {
			return 0
		}
		lo := b[5]
		switch {
		case lo >= '0' && lo <= '9':
			lo -= '0'
		case lo >= 'a' && lo <= 'f':
			lo -= 'a' - 10
		default:
			return 0
		}
		switch (b[4]-'0')<<4 | lo {
		case '\b', '\f', '\n', '\r', '\t':
			return 0 // written as the short escape
		}
		return 6
	}
	return 0
}

// integer checks an integer of at most 15 characters, as JCS writes it: no leading zero,
// not -0, and followed by what ends a value (the caller checks which).
func (f *fastChecker) integer() bool {
	start := f.pos
	i := start
	if f.in[i] == '-' {
		i++
	}
	digits := i
	for i < len(f.in) && f.in[i] >= '0' && f.in[i] <= '9' {
		i++
	}
	n := i - digits
	switch {
	case n == 0, n > 1 && f.in[digits] == '0', f.in[digits] == '0' && digits > start, i-start > 15:
		return false // no digit, a leading zero, -0, or a number the slow path must weigh
	}
	if i < len(f.in) && (f.in[i] == '.' || f.in[i] == 'e' || f.in[i] == 'E') {
		return false
	}
	f.pos = i
	return true
}

// literal checks true, false or null.
func (f *fastChecker) literal(word string) bool {
	if !bytes.HasPrefix(f.in[f.pos:], []byte(word)) {
		return false
	}
	f.pos += len(word)
	return true
}
