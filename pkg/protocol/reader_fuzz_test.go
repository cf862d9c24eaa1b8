package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// readAny decodes one JSON text with the project's tokenizer into the values
// encoding/json's Decoder with UseNumber makes: map[string]any, []any, string,
// json.Number, bool and nil. Duplicate member names are refused, as every Cairn reader
// refuses them.
func readAny(rd *jsonread.Reader) (any, error) {
	rd.RefuseDuplicates = true
	v, err := readAnyValue(rd)
	if err == nil {
		err = rd.End()
	}
	return v, err
}

func readAnyValue(rd *jsonread.Reader) (any, error) {
	k, err := rd.Peek()
	if err != nil {
		return nil, err
	}
	switch k {
	case jsonread.Object:
		m := map[string]any{}
		if err := rd.Begin(k); err != nil {
			return nil, err
		}
		for {
			name, ok, err := rd.Key()
			if err != nil {
				return nil, err
			}
			if !ok {
				return m, nil
			}
			key := string(name)
			if m[key], err = readAnyValue(rd); err != nil {
				return nil, err
			}
		}
	case jsonread.Array:
		a := []any{}
		if err := rd.Begin(k); err != nil {
			return nil, err
		}
		for {
			more, err := rd.More()
			if err != nil {
				return nil, err
			}
			if !more {
				return a, nil
			}
			v, err := readAnyValue(rd)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case jsonread.String:
		s, _, err := rd.String()
		return string(s), err
	case jsonread.Number:
		n, err := rd.Number()
		return json.Number(n), err
	case jsonread.True, jsonread.False, jsonread.Null:
		return map[jsonread.Kind]any{jsonread.True: true, jsonread.False: false, jsonread.Null: nil}[k], rd.Literal(k)
	}
	return nil, fmt.Errorf("%w: at byte %d: no value starts here", jsonread.ErrSyntax, rd.Offset())
}

// stdDecode is encoding/json's verdict and value for data.
func stdDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("encoding/json: not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// stdShape walks data, which encoding/json finds valid, with encoding/json's tokens and
// reports whether an object repeats a member name and how deeply it nests: the oracle
// for two of the documented exceptions, independent of the project's reader.
func stdShape(data []byte) (duplicate bool, depth int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type level struct {
		object bool
		names  map[string]bool
		key    bool // the next token of the object is a name
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return duplicate, depth
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
			if name, ok := tok.(string); ok {
				duplicate = duplicate || stack[n-1].names[name]
				stack[n-1].names[name] = true
				stack[n-1].key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true // this value is the member's; a name follows it
			}
			stack = append(stack, level{object: tok == json.Delim('{'), names: map[string]bool{}, key: true})
			depth = max(depth, len(stack))
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = true
		}
	}
}

// replacements counts U+FFFD in the strings and names of v.
func replacements(v any) int {
	switch v := v.(type) {
	case string:
		return strings.Count(v, "\uFFFD")
	case []any:
		n := 0
		for _, e := range v {
			n += replacements(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += strings.Count(k, "\uFFFD") + replacements(e)
		}
		return n
	}
	return 0
}

// writtenReplacements counts the U+FFFD that data itself writes, literally or escaped.
func writtenReplacements(data []byte) int {
	return bytes.Count(data, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(data), []byte(`\ufffd`))
}

// checkAgainstStd compares the project's verdict and value for data (err, v) with
// encoding/json's. Where encoding/json accepts and the project refuses, the refusal must
// be one of the documented exceptions and the input must really hold it: invalid UTF-8
// or a lone surrogate (encoding/json substituted U+FFFD that the input does not write), a
// repeated member name, or nesting deeper than the reader's limit.
func checkAgainstStd(t *testing.T, data []byte, v any, err error, maxDepth int) {
	t.Helper()
	want, stdErr := stdDecode(data)
	switch {
	case err != nil && !errors.Is(err, jsonread.ErrSyntax):
		t.Fatalf("%q: error wraps no ErrSyntax: %v", data, err)
	case stdErr != nil && err == nil:
		t.Fatalf("%q: the project's reader accepts what encoding/json refuses (%v): %#v", data, stdErr, v)
	case stdErr != nil:
		return // both refuse
	case err == nil:
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%q: the project reads %#v, encoding/json %#v", data, v, want)
		}
		return
	}
	// encoding/json accepts; the project refused.
	duplicate, depth := stdShape(data)
	substituted := !utf8.Valid(data) || replacements(want) > writtenReplacements(data)
	switch {
	case errors.Is(err, jsonread.ErrUTF8) && substituted:
	case errors.Is(err, jsonread.ErrDuplicate) && duplicate:
	case errors.Is(err, jsonread.ErrDepth) && depth > maxDepth:
	default:
		t.Fatalf("%q: encoding/json accepts %#v, the project refuses (%v) with no documented exception (substituted U+FFFD %v, duplicate %v, depth %d)",
			data, want, err, substituted, duplicate, depth)
	}
}

// readerSeeds are JSON texts for the differential fuzz target: every kind of value,
// escapes, the exceptions, and exports honest and pretty-printed.
func readerSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{}
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e-3`, `1E400`, `true`, `null`, ` [1, "a" ,{"b":[]}] `,
		`"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\xff\"",
		"\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\uFFFD\"", `{"a":1,"a":2}`, `{"a":{"b":1,"\u0062":2}}`,
		`[01]`, `[1.]`, `{"a" 1}`, `{"a":1,}`, "\"a\x01\"", `"\x"`, `[1]x`, "\t{\r\n}\n",
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001), strings.Repeat("[", 1000) + strings.Repeat("]", 1000),
		`"` + strings.Repeat("ab\\n", 40) + `"`, `{"k":"` + strings.Repeat("é", 30) + `"}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	for _, name := range []string{"valid", "valid-header-only", "unknown-member"} {
		export := exportCases[name].export(tb)
		seeds = append(seeds, export)
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, export, "", "  "); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, pretty.Bytes())
	}
	return seeds
}

// FuzzReaderMatchesEncodingJSON feeds the same bytes to the project's tokenizer, from a
// byte slice and from a stream whose buffer holds only 1 to 16 bytes (so a refill falls
// at every position), and to encoding/json. The slice and the stream must agree exactly
// (value, or error text); against encoding/json, verdict and value must be the same
// except for the documented exceptions, each checked against an independent oracle
// (checkAgainstStd).
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for i, seed := range readerSeeds(f) {
		f.Add(seed, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		if len(data) > 1<<16 {
			return
		}
		v, err := readAny(jsonread.NewBytes(data))
		sv, serr := readAny(jsonread.NewStream(bytes.NewReader(data), int(size%16)+1))
		if fmt.Sprint(err) != fmt.Sprint(serr) || !reflect.DeepEqual(v, sv) {
			t.Fatalf("%q: slice reads %#v (%v), stream of %d-byte reads %#v (%v)", data, v, err, size%16+1, sv, serr)
		}
		checkAgainstStd(t, data, v, err, jsonread.DefaultMaxDepth)
	})
}

// TestReaderMatchesEncodingJSON runs the fuzz target's check on its seeds with every
// buffer size from 1 to 16 bytes.
func TestReaderMatchesEncodingJSON(t *testing.T) {
	for _, data := range readerSeeds(t) {
		v, err := readAny(jsonread.NewBytes(data))
		checkAgainstStd(t, data, v, err, jsonread.DefaultMaxDepth)
		for size := 1; size <= 16; size++ {
			sv, serr := readAny(jsonread.NewStream(iotestOneByte{bytes.NewReader(data)}, size))
			if fmt.Sprint(err) != fmt.Sprint(serr) || !reflect.DeepEqual(v, sv) {
				t.Fatalf("%.60q: slice reads (%v), stream of %d-byte reads (%v)", data, err, size, serr)
			}
		}
	}
}

// iotestOneByte returns at most one byte per Read, so short reads are exercised too.
type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}
