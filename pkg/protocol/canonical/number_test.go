package canonical

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unicode/utf16"
)

// TestAppendESAppendixB checks the number serialization samples of RFC 8785 Appendix B,
// given as IEEE-754 bit patterns (NaN and Infinity, which JSON cannot carry, left out).
func TestAppendESAppendixB(t *testing.T) {
	cases := map[string]struct {
		bits uint64
		want string
	}{
		"zero":                  {0x0000000000000000, "0"},
		"minus zero":            {0x8000000000000000, "0"},
		"min pos number":        {0x0000000000000001, "5e-324"},
		"min neg number":        {0x8000000000000001, "-5e-324"},
		"max pos number":        {0x7fefffffffffffff, "1.7976931348623157e+308"},
		"max neg number":        {0xffefffffffffffff, "-1.7976931348623157e+308"},
		"max pos int":           {0x4340000000000000, "9007199254740992"},
		"max neg int":           {0xc340000000000000, "-9007199254740992"},
		"about 2^68":            {0x4430000000000000, "295147905179352830000"},
		"below 1e23":            {0x44b52d02c7e14af5, "9.999999999999997e+22"},
		"1e23":                  {0x44b52d02c7e14af6, "1e+23"},
		"above 1e23":            {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		"two below 1e21":        {0x444b1ae4d6e2ef4e, "999999999999999700000"},
		"one below 1e21":        {0x444b1ae4d6e2ef4f, "999999999999999900000"},
		"1e21":                  {0x444b1ae4d6e2ef50, "1e+21"},
		"below 1e-6":            {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		"1e-6":                  {0x3eb0c6f7a0b5ed8d, "0.000001"},
		"third 3":               {0x41b3de4355555553, "333333333.3333332"},
		"third 4":               {0x41b3de4355555554, "333333333.33333325"},
		"third 5":               {0x41b3de4355555555, "333333333.3333333"},
		"third 6":               {0x41b3de4355555556, "333333333.3333334"},
		"third 7":               {0x41b3de4355555557, "333333333.33333343"},
		"small negative":        {0xbecbf647612f3696, "-0.0000033333333333333333"},
		"round to even":         {0x43143ff3c1cb0959, "1424953923781206.2"},
		"2^53+2":                {0x4340000000000001, "9007199254740994"},
		"1e20":                  {math.Float64bits(1e20), "100000000000000000000"},
		"1e-7":                  {math.Float64bits(1e-7), "1e-7"},
		"one":                   {math.Float64bits(1), "1"},
		"one and a bit":         {0x3ff0000000000001, "1.0000000000000002"},
		"just below one":        {0x3fefffffffffffff, "0.9999999999999999"},
		"negative exponent int": {math.Float64bits(-1.5e300), "-1.5e+300"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := string(appendES(nil, math.Float64frombits(c.bits)))
			if got != c.want {
				t.Errorf("%016x: got %s, want %s", c.bits, got, c.want)
			}
		})
	}
}

// TestAppendESRoundTrip checks on random doubles that the output parses back to the same
// double and that Transform leaves it unchanged.
func TestAppendESRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := appendES(nil, f)
		back, err := strconv.ParseFloat(string(s), 64)
		if err != nil || (back != f && !(f == 0 && back == 0)) {
			t.Fatalf("%016x: %s parses back as %v, %v", math.Float64bits(f), s, back, err)
		}
		again, err := Transform(s)
		if err != nil && back == math.Trunc(back) && math.Abs(back) > maxSafeInteger {
			continue // an integer literal beyond 2^53−1 is refused by design
		}
		if err != nil || string(again) != string(s) {
			t.Fatalf("%016x: Transform(%s) = %s, %v", math.Float64bits(f), s, again, err)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	cases := map[string]struct {
		a, b string
		want int
	}{
		"equal":                   {"abc", "abc", 0},
		"prefix":                  {"ab", "abc", -1},
		"ascii":                   {"b", "a", 1},
		"astral before U+FB33":    {"\U0001F600", "\uFB33", -1},
		"astral after U+D7FF":     {"\U0001F600", "\uD7FF", 1},
		"two astral":              {"\U0001F600", "\U0001F601", -1},
		"astral vs high astral":   {"\U00010000", "\U0010FFFF", -1},
		"control before digit":    {"\r", "1", -1},
		"U+0080 before U+00F6":    {"\u0080", "\u00f6", -1},
		"astral in second place":  {"a\U0001F600", "a\uE000", -1},
		"empty before everything": {"", "\u0000", -1},
		"same lead byte":          {"\u00e9", "\u00ea", -1},
		"same first two bytes":    {"\u20ac", "\u20ad", -1},
		"astral sharing a lead":   {"\U0001F600", "\U0001F4A9", 1},
		"ASCII against non-ASCII": {"a\u00e9", "aZ", 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := compareUTF16(c.a, c.b); got != c.want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
			}
			if got := compareUTF16(c.b, c.a); got != -c.want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
			}
		})
	}
}

// TestCompareUTF16AgainstEncoding compares compareUTF16 with the comparison of the UTF-16
// encodings themselves, over strings drawn from characters around the boundaries.
func TestCompareUTF16AgainstEncoding(t *testing.T) {
	chars := []rune{'a', 'b', 0x7f, 0x80, 0xe9, 0xea, 0x7ff, 0x800, 0x20ac, 0xd7ff, 0xe000, 0xfb33, 0xffff,
		0x10000, 0x1f4a9, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(3, 4))
	str := func() string {
		rs := make([]rune, r.IntN(4))
		for i := range rs {
			rs[i] = chars[r.IntN(len(chars))]
		}
		return string(rs)
	}
	for range 50_000 {
		a, b := str(), str()
		if got, want := compareUTF16(a, b), slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, the encodings compare %d", a, b, got, want)
		}
	}
}
