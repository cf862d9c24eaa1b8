package canonical

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// rfcExampleIn and rfcExampleOut are the example of RFC 8785 section 3.2.2.
const (
	rfcExampleIn  = `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`
	rfcExampleOut = `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
)

// rfcSortIn is the example of RFC 8785 section 3.2.3; rfcSortOut is its expected order.
const (
	rfcSortIn  = `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`
	rfcSortOut = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
)

func TestTransform(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"rfc 8785 3.2.2":      {rfcExampleIn, rfcExampleOut},
		"rfc 8785 3.2.3":      {rfcSortIn, rfcSortOut},
		"whitespace":          {" {\n\t\"b\" : [ 1 , 2 ] ,\r\n \"a\" : { } } ", `{"a":{},"b":[1,2]}`},
		"nested sort":         {`{"z":{"y":1,"x":[{"b":0,"a":0}]},"a":[]}`, `{"a":[],"z":{"x":[{"a":0,"b":0}],"y":1}}`},
		"scalar at top":       {`"x"`, `"x"`},
		"literals":            {`[true,false,null]`, `[true,false,null]`},
		"slash and del kept":  {`"a\/b` + "\x7f" + `"`, "\"a/b\x7f\""},
		"controls":            {`"\u0000\u0001\b\f\n\r\t\u001f\u0020"`, `"\u0000\u0001\b\f\n\r\t\u001f "`},
		"unicode escapes":     {`"\u00e9\uD83D\uDE00\u2028"`, "\"é\U0001F600\u2028\""},
		"raw utf-8 kept":      {"\"é😀\"", "\"é😀\""},
		"zero":                {`0`, `0`},
		"minus zero":          {`-0`, `0`},
		"minus zero float":    {`-0.0`, `0`},
		"4.50":                {`4.50`, `4.5`},
		"2e-3":                {`2e-3`, `0.002`},
		"1E30":                {`1E30`, `1e+30`},
		"1e21":                {`1e21`, `1e+21`},
		"1e21 mantissa":       {`1.5e21`, `1.5e+21`},
		"2^53-1 as exponent":  {`9.007199254740991e15`, `9007199254740991`},
		"5e-324":              {`5e-324`, `5e-324`},
		"max double":          {`1.7976931348623157e308`, `1.7976931348623157e+308`},
		"max safe int":        {`9007199254740991`, `9007199254740991`},
		"min safe int":        {`-9007199254740991`, `-9007199254740991`},
		"0.000001":            {`0.000001`, `0.000001`},
		"1e-7":                {`1e-7`, `1e-7`},
		"underflow to zero":   {`1e-400`, `0`},
		"integer with exp":    {`1e2`, `100`},
		"fraction rounds":     {`0.1000000000000000055511151231257827`, `0.1`},
		"negative fraction":   {`-123e-2`, `-1.23`},
		"long fraction":       {`333333333.33333329`, `333333333.3333333`},
		"plain integer":       {`[100,-42]`, `[100,-42]`},
		"escaped equal key":   {`{"a\u0062":1,"ab ":2}`, `{"ab":1,"ab ":2}`},
		"empty key sorts 1st": {`{"a":1,"":2}`, `{"":2,"a":1}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Transform([]byte(c.in))
			if err != nil {
				t.Fatalf("Transform(%s): %v", c.in, err)
			}
			if string(got) != c.want {
				t.Errorf("Transform(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

// invalidJSON are inputs both forms refuse.
var invalidJSON = map[string]string{
	"empty":                "",
	"only space":           "  ",
	"trailing data":        `{"a":1}x`,
	"two values":           `1 2`,
	"trailing bracket":     `[]]`,
	"duplicate key":        `{"a":1,"a":2}`,
	"duplicate escaped":    `{"a":1,"\u0061":2}`,
	"duplicate nested":     `[{"k":{"x":1,"x":1}}]`,
	"invalid utf-8":        "\"\xff\"",
	"invalid utf-8 key":    "{\"\xc3\":1}",
	"utf-8 surrogate":      "\"\xed\xa0\x80\"",
	"overlong utf-8":       "\"\xc0\xaf\"",
	"lone high surrogate":  `"\ud800"`,
	"lone low surrogate":   `"\udc00"`,
	"high then letter":     `"\ud800\u0041"`,
	"high then raw":        `"\ud800x"`,
	"high then high":       `"\ud800\ud800"`,
	"raw control":          "\"a\x01\"",
	"raw newline":          "\"a\n\"",
	"bad escape":           `"\q"`,
	"short unicode escape": `"\u12"`,
	"bad hex":              `"\u12g4"`,
	"unterminated string":  `"abc`,
	"unterminated escape":  `"\`,
	"unterminated array":   `[1,2`,
	"unterminated object":  `{"a":1`,
	"trailing comma":       `[1,]`,
	"object trailing":      `{"a":1,}`,
	"missing colon":        `{"a" 1}`,
	"missing comma":        `[1 2]`,
	"non-string key":       `{1:2}`,
	"leading zero":         `01`,
	"trailing dot":         `1.`,
	"leading dot":          `.5`,
	"plus sign":            `+1`,
	"bare minus":           `-`,
	"empty exponent":       `1e`,
	"NaN":                  `NaN`,
	"Infinity":             `Infinity`,
	"short literal":        `tru`,
	"capital literal":      `True`,
	"byte order mark":      "\xef\xbb\xbf{}",
	"comment":              `/* */{}`,
	"single quotes":        `'a'`,
	"too deep":             strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}

func TestTransformErrors(t *testing.T) {
	cases := map[string]string{
		"2^53":               `9007199254740992`,
		"-2^53":              `-9007199254740992`,
		"2^53 in object":     `{"n":9007199254740992}`,
		"huge integer":       `123456789012345680000`,
		"very long integer":  strings.Repeat("9", 400),
		"overflow":           `1e400`,
		"negative overflow":  `-1e400`,
		"overflow, fraction": `[1.8e308]`,
		// ECMAScript would write these as integer literals beyond 2^53−1, which Transform
		// refuses; their formatting is checked in TestAppendESAppendixB.
		"2^67 as exponent":   `1.2345678901234568e20`,
		"2^53 with fraction": `9007199254740992.0`,
		"1e20":               `1e20`,
		"-1.5e17":            `-1.5e17`,
		"1e21 minus a bit":   `9.999999999999999e20`,
		"2^53+1.5":           `9007199254740993.5`,
	}
	for name, in := range invalidJSON {
		cases["invalid json: "+name] = in
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Transform([]byte(in))
			if err == nil {
				t.Fatalf("Transform(%q) = %s, want an error", in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestTransformDepthLimit(t *testing.T) {
	in := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := Transform([]byte(in)); err != nil {
		t.Fatalf("nesting of %d: %v", maxDepth, err)
	}
}

func TestMarshal(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A []int  `json:"a"`
	}
	cases := map[string]struct {
		in   any
		want string
	}{
		"struct":            {struct{ B, A any }{B: 1.5, A: inner{Z: "<&>", A: []int{3, 1}}}, `{"A":{"a":[3,1],"z":"<&>"},"B":1.5}`},
		"map":               {map[string]any{"é": true, "e": nil}, `{"e":null,"é":true}`},
		"line separator":    {"\u2028", "\"\u2028\""},
		"float like int":    {float64(3), `3`},
		"large float":       {1e21, `1e+21`},
		"max safe int":      {int64(maxSafeInteger), `9007199254740991`},
		"raw json reformed": {rawJSON(`{ "b":1, "a":2 }`), `{"a":2,"b":1}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Marshal(c.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestMarshalErrors(t *testing.T) {
	cases := map[string]any{
		"NaN":             math.NaN(),
		"int beyond 2^53": int64(1) << 60,
		"float 1e20":      1e20, // encoding/json writes it as an integer literal
		"channel":         make(chan int),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := Marshal(v); !errors.Is(err, ErrInvalid) {
				t.Errorf("Marshal = %s, %v; want an error wrapping ErrInvalid", got, err)
			}
		})
	}
}

// TestReceiptForm compares with output derived by hand from the rules of Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":")) with ensure_ascii=True.
func TestReceiptForm(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"brief example":     {`{"b":"é","a":[1,-0,null]}`, `{"a":[1,0,null],"b":"\u00e9"}`},
		"emoji":             {`"😀"`, `"\ud83d\ude00"`},
		"escaped emoji":     {`"\uD83D\uDE00"`, `"\ud83d\ude00"`},
		"slash":             {`"a/b"`, `"a/b"`},
		"escaped slash":     {`"a\/b"`, `"a/b"`},
		"del is escaped":    {"\"\x7f\"", `"\u007f"`},
		"printable ascii":   {`" ~!'<>&"`, `" ~!'<>&"`},
		"short escapes":     {`"\"\\\b\f\n\r\t"`, `"\"\\\b\f\n\r\t"`},
		"other controls":    {`"\u0000\u001F\u000b"`, `"\u0000\u001f\u000b"`},
		"bmp":               {`"€\ufb33\uFFFF"`, `"\u20ac\ufb33\uffff"`},
		"code point order":  {`{"é":1,"z":2,"Z":3,"😀":4,"דּ":5}`, `{"Z":3,"z":2,"\u00e9":1,"\ufb33":5,"\ud83d\ude00":4}`},
		"rfc sort example":  {rfcSortIn, `{"\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ufb33":"Hebrew Letter Dalet With Dagesh","\ud83d\ude00":"Emoji: Grinning Face"}`},
		"nested":            {"{ \"z\" : { \"b\" : [ true , false ] , \"a\" : { } } ,\n\"a\":[]}", `{"a":[],"z":{"a":{},"b":[true,false]}}`},
		"big integer":       {`[123456789012345678901234567890,-9007199254740993]`, `[123456789012345678901234567890,-9007199254740993]`},
		"zero":              {`0`, `0`},
		"minus zero":        {`-0`, `0`},
		"prefix keys":       {`{"ab":1,"a":2,"":3}`, `{"":3,"a":2,"ab":1}`},
		"escaped equal key": {`{"\u0041":1,"B":2}`, `{"A":1,"B":2}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReceiptForm([]byte(c.in))
			if err != nil {
				t.Fatalf("ReceiptForm(%s): %v", c.in, err)
			}
			if string(got) != c.want {
				t.Errorf("ReceiptForm(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

func TestReceiptFormErrors(t *testing.T) {
	cases := map[string]string{
		"fraction":          `1.5`,
		"integral fraction": `1.0`,
		"exponent":          `1e2`,
		"minus zero float":  `-0.0`,
		"nested fraction":   `{"a":[{"b":0.5}]}`,
	}
	for name, in := range invalidJSON {
		cases["invalid json: "+name] = in
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReceiptForm([]byte(in))
			if err == nil {
				t.Fatalf("ReceiptForm(%q) = %s, want an error", in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}
