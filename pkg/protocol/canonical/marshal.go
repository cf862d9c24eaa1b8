package canonical

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file writes the values a span's attributes are made of straight into their JCS
// form, without the round trip through encoding/json's text that Marshal otherwise makes.
// The output, and whether there is an error, is exactly what that round trip gives: a test
// compares the two over generated values. A value of any other type is left to the round
// trip, whole, so that nothing about it can differ.

// appendGo appends the JCS form of v, found at the given depth of nesting, and reports
// whether v was made only of the types this file writes: nil; bool; string; int, int64,
// int32, uint32 and uint64; float64; []any, []string, []bool, []int64 and []float64; and
// map[string]any. When it reports false, out is garbage and err nil.
func appendGo(out []byte, v any, depth int) (_ []byte, direct bool, err error) {
	switch v := v.(type) {
	case nil:
		return append(out, "null"...), true, nil
	case bool:
		if v {
			return append(out, "true"...), true, nil
		}
		return append(out, "false"...), true, nil
	case string:
		return appendGoString(out, v), true, nil
	case int:
		return appendGoInt(out, int64(v))
	case int64:
		return appendGoInt(out, v)
	case int32:
		return appendGoInt(out, int64(v))
	case uint32:
		return appendGoInt(out, int64(v))
	case uint64:
		if v > maxSafeInteger {
			return nil, true, invalidf("integer %d is beyond ±(2^53−1) and would be rounded", v)
		}
		return appendGoInt(out, int64(v))
	case float64:
		return appendGoFloat(out, v)
	case map[string]any:
		return appendGoMap(out, v, depth)
	case []any:
		return appendGoSlice(out, v, depth, func(out []byte, e any) ([]byte, bool, error) { return appendGo(out, e, depth+1) })
	case []string:
		return appendGoSlice(out, v, depth, func(out []byte, s string) ([]byte, bool, error) { return appendGoString(out, s), true, nil })
	case []bool:
		return appendGoSlice(out, v, depth, func(out []byte, b bool) ([]byte, bool, error) { return appendGo(out, b, depth+1) })
	case []int64:
		return appendGoSlice(out, v, depth, appendGoInt)
	case []float64:
		return appendGoSlice(out, v, depth, appendGoFloat)
	default:
		return nil, false, nil
	}
}

// appendGoString appends s as encoding/json and then Transform leave it: each byte that
// is not part of valid UTF-8 becomes U+FFFD.
func appendGoString(out []byte, s string) []byte {
	if utf8.ValidString(s) {
		return AppendString(out, s)
	}
	return AppendString(out, validGoString(s))
}

// validGoString replaces each byte of s that is not part of valid UTF-8 with U+FFFD, as
// encoding/json does (strings.ToValidUTF8 would replace a run of them with one).
func validGoString(s string) string {
	valid := make([]byte, 0, len(s)+8)
	for _, r := range s { // range yields utf8.RuneError for each invalid byte
		valid = utf8.AppendRune(valid, r)
	}
	return string(valid)
}

// appendGoInt appends n, refusing a magnitude beyond 2^53−1 as Transform does.
func appendGoInt(out []byte, n int64) ([]byte, bool, error) {
	if n > maxSafeInteger || n < -maxSafeInteger {
		return nil, true, invalidf("integer %d is beyond ±(2^53−1) and would be rounded", n)
	}
	return strconv.AppendInt(out, n, 10), true, nil
}

// appendGoFloat appends f as JCS does. encoding/json writes a whole number below 1e21 in
// magnitude without a fraction or exponent, which Transform reads as an integer literal,
// so such a number is held to the integer limit.
func appendGoFloat(out []byte, f float64) ([]byte, bool, error) {
	switch a := math.Abs(f); {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return nil, true, invalidf("number %v is not a finite double", f)
	case a < 1e21 && f == math.Trunc(f):
		if a > maxSafeInteger {
			return nil, true, invalidf("number %v is an integer beyond ±(2^53−1)", f)
		}
		return appendGoInt(out, int64(f))
	}
	return appendES(out, f), true, nil
}

// appendGoSlice appends a slice as a JSON array; a nil slice is null, as encoding/json
// writes it.
func appendGoSlice[E any](out []byte, s []E, depth int, elem func([]byte, E) ([]byte, bool, error)) ([]byte, bool, error) {
	if s == nil {
		return append(out, "null"...), true, nil
	}
	if depth+1 > maxDepth {
		return nil, true, invalidf("nesting deeper than %d levels", maxDepth)
	}
	out = append(out, '[')
	for i, e := range s {
		if i > 0 {
			out = append(out, ',')
		}
		var direct bool
		var err error
		if out, direct, err = elem(out, e); !direct || err != nil {
			return nil, direct, err
		}
	}
	return append(out, ']'), true, nil
}

// appendGoMap appends m as a JSON object with its members in JCS order; a nil map is
// null, as encoding/json writes it. Two keys that differ only in bytes that are not
// valid UTF-8 become the same key, which is an error, as it is for Transform.
func appendGoMap(out []byte, m map[string]any, depth int) ([]byte, bool, error) {
	if m == nil {
		return append(out, "null"...), true, nil
	}
	if depth+1 > maxDepth {
		return nil, true, invalidf("nesting deeper than %d levels", maxDepth)
	}
	type goMember struct {
		key string // made valid UTF-8
		val any
	}
	members := make([]goMember, 0, len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			k = validGoString(k)
		}
		members = append(members, goMember{k, v})
	}
	slices.SortFunc(members, func(a, b goMember) int { return compareUTF16(a.key, b.key) })
	out = append(out, '{')
	for i := range members {
		if i > 0 {
			if members[i-1].key == members[i].key {
				return nil, true, invalidf("duplicate object key %q", members[i].key)
			}
			out = append(out, ',')
		}
		out = AppendString(out, members[i].key)
		out = append(out, ':')
		var direct bool
		var err error
		if out, direct, err = appendGo(out, members[i].val, depth+1); !direct || err != nil {
			return nil, direct, err
		}
	}
	return append(out, '}'), true, nil
}
