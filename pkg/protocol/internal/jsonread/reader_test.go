package jsonread

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// walk reads one whole text with r, skipping every value.
func walk(r *Reader) error {
	r.RefuseDuplicates = true
	if err := r.Skip(); err != nil {
		return err
	}
	return r.End()
}

// TestRules checks each rule of the package documentation, from a byte slice and from
// streams read 1, 2, 3, 7 and 64 bytes at a time.
func TestRules(t *testing.T) {
	cases := map[string]struct {
		in   string
		want error // nil, ErrSyntax, or the stricter ErrUTF8, ErrDuplicate, ErrDepth
	}{
		"whitespace between every token": {" {\t\"a\" :\r\n[ 1 , true,null ]\n} ", nil},
		"escapes":                        {`"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`, nil},
		"raw UTF-8":                      {"\"é✓😀\uFFFD\"", nil},
		"invalid UTF-8":                  {"\"a\xffb\"", ErrUTF8},
		"UTF-8 surrogate":                {"\"\xed\xa0\x80\"", ErrUTF8},
		"overlong UTF-8":                 {"\"\xc0\xaf\"", ErrUTF8},
		"truncated UTF-8":                {"\"\xe2\x9c\"", ErrUTF8},
		"lone high surrogate":            {`"\ud800"`, ErrUTF8},
		"high surrogate then a letter":   {`"\ud800\u0041"`, ErrUTF8},
		"lone low surrogate":             {`"x\udc00"`, ErrUTF8},
		"control character":              {"\"a\x1fb\"", ErrSyntax},
		"unknown escape":                 {`"\x41"`, ErrSyntax},
		"short \\u escape":               {`"\u12"`, ErrSyntax},
		"duplicate name":                 {`{"a":1,"a":2}`, ErrDuplicate},
		"duplicate name after unescape":  {`{"a":1,"\u0061":2}`, ErrDuplicate},
		"same name in two objects":       {`[{"a":1},{"a":2}]`, nil},
		"1000 levels":                    {strings.Repeat("[", 1000) + strings.Repeat("]", 1000), nil},
		"1001 levels":                    {strings.Repeat("[", 1001) + strings.Repeat("]", 1001), ErrDepth},
		"numbers":                        {`[0,-0,1.5,-2e-3,1E400,100000000000000000000000]`, nil},
		"leading zero":                   {`01`, ErrSyntax},
		"bare fraction":                  {`.5`, ErrSyntax},
		"dot without digits":             {`1.`, ErrSyntax},
		"exponent without digits":        {`1e+`, ErrSyntax},
		"plus sign":                      {`+1`, ErrSyntax},
		"trailing comma":                 {`[1,]`, ErrSyntax},
		"missing comma":                  {`[1 2]`, ErrSyntax},
		"data after the value":           {`{} {}`, ErrSyntax},
		"bad literal":                    {`tru`, ErrSyntax},
		"empty input":                    {``, ErrSyntax},
		"unterminated string":            {`"abc`, ErrSyntax},
		"byte order mark":                {"\xef\xbb\xbf{}", ErrSyntax},
	}
	for name, c := range cases {
		readers := map[string]func() *Reader{"slice": func() *Reader { return NewBytes([]byte(c.in)) }}
		for _, size := range []int{1, 2, 3, 7, 64} {
			readers[strings.Repeat("s", size)] = func() *Reader { return NewStream(strings.NewReader(c.in), size) }
		}
		for how, newReader := range readers {
			err := walk(newReader())
			switch {
			case c.want == nil && err != nil:
				t.Errorf("%s (%d-byte stream %v): %v", name, len(how), how != "slice", err)
			case c.want != nil && (!errors.Is(err, ErrSyntax) || !errors.Is(err, c.want)):
				t.Errorf("%s (%s): got %v, want %v", name, how, err, c.want)
			case errors.Is(ErrSyntax, c.want) && (errors.Is(err, ErrUTF8) || errors.Is(err, ErrDuplicate) || errors.Is(err, ErrDepth)):
				t.Errorf("%s (%s): %v is a stricter-than-JSON error, want a plain syntax error", name, how, err)
			}
		}
	}
}

// TestStringsAcrossRefills reads long strings whose escapes and multi-byte characters
// straddle every buffer boundary, and compares the decoded text.
func TestStringsAcrossRefills(t *testing.T) {
	want := strings.Repeat("ab\n\"é\U0001F600\\/", 50)
	in := `"` + strings.Repeat(`ab\n\"é\ud83d\ude00\\\/`, 50) + `"`
	for size := 1; size <= 40; size++ {
		r := NewStream(strings.NewReader(in), size)
		got, escaped, err := r.String()
		if err != nil || !escaped || string(got) != want {
			t.Fatalf("%d-byte reads: %q, %v, %v", size, got, escaped, err)
		}
	}
	r := NewStream(strings.NewReader(`"`+strings.Repeat("x", 100)+`"`), 8)
	r.MaxToken = 99
	if _, _, err := r.String(); !errors.Is(err, ErrSyntax) {
		t.Fatalf("a 100-byte string with MaxToken 99: %v", err)
	}
}

// TestRefuseSpace is the canonical checker's mode: no whitespace anywhere.
func TestRefuseSpace(t *testing.T) {
	for in, ok := range map[string]bool{`{"a":[1,2]}`: true, `{"a": 1}`: false, `[1 ]`: false, "{}\n": false, `" "`: true} {
		r := NewBytes([]byte(in))
		r.RefuseSpace = true
		if err := walk(r); (err == nil) != ok {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestReaderErrors checks that a failing source's error comes back.
func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewStream(&failing{data: []byte(`{"a":`), err: boom}, 4)
	if err := walk(r); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the source's error", err)
	}
	if err := walk(NewStream(nothing{}, 4)); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("a source that returns nothing: %v", err)
	}
	if err := walk(NewBytes(bytes.Repeat([]byte("["), 10))); !errors.Is(err, ErrSyntax) {
		t.Fatalf("unclosed arrays: %v", err)
	}
}

// nothing is a source that returns no bytes and no error, forever.
type nothing struct{}

func (nothing) Read([]byte) (int, error) { return 0, nil }

type failing struct {
	data []byte
	err  error
}

func (f *failing) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}
