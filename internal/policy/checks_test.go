package policy

import (
	"strings"
	"testing"
)

func TestLuhnCard(t *testing.T) {
	cases := map[string]struct {
		in   string
		want bool
	}{
		"visa test number":       {"4111111111111111", true},
		"visa grouped by spaces": {"4111 1111 1111 1111", true},
		"mastercard grouped":     {"5500-0000-0000-0004", true},
		"amex 15 digits":         {"378282246310005", true},
		"one digit off":          {"4111111111111112", false},
		"all zeros passes luhn":  {"0000000000000000", false},
		"too short":              {"411111111111", false},
		"twenty digits too long": {"41111111111111111111", false},
		"luhn ok but 12 digits":  {"000000000018", false},
		"visa 13 digits":         {"4222222222222", true},
		"19 digits":              {"6011000990139424009", true}, // check digit worked out by hand
		"19 digits wrong check":  {"6011000990139424000", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := luhnCard(tc.in); got != tc.want {
				t.Errorf("luhnCard(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestValidSSN(t *testing.T) {
	cases := map[string]bool{
		"123-45-6789": true,
		"000-45-6789": false,
		"666-45-6789": false,
		"900-45-6789": false,
		"123-00-6789": false,
		"123-45-0000": false,
		"123-456-789": true, // right length; the expression never hands this shape over
	}
	for in, want := range cases {
		if got := validSSN(in); got != want {
			t.Errorf("validSSN(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestValidIBAN(t *testing.T) {
	cases := map[string]bool{
		"DE89370400440532013000":       true,
		"DE89 3704 0044 0532 0130 00":  true,
		"GB82WEST12345698765432":       true,
		"GB82 WEST 1234 5698 7654 32":  true,
		"FR1420041010050500013M02606":  true,
		"DE89370400440532013001":       false,
		"GB83WEST12345698765432":       false,
		"DE8937040044":                 false, // too short
		"de89370400440532013000":       false, // lower case is not IBAN
		"XX00000000000000000000000000": false,
	}
	for in, want := range cases {
		if got := validIBAN(in); got != want {
			t.Errorf("validIBAN(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMask(t *testing.T) {
	cases := map[string]struct {
		in     string
		reveal bool
		want   string
	}{
		"card shows last four":      {"4111 1111 1111 1111", true, "***************1111"},
		"ssn shows last two":        {"123-45-6789", true, "*********89"},
		"short shows nothing":       {"abc", true, "***"},
		"secret shows nothing":      {"sk-abcdefghijklmnopqrstuvwxyz", false, strings.Repeat("*", 29)},
		"multibyte tail kept whole": {"ééééééééé€", true, "********é€"},
		"long match capped":         {strings.Repeat("a", 500) + "WXYZ", true, strings.Repeat("*", 60) + "WXYZ"},
		"empty":                     {"", true, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := mask(tc.in, tc.reveal); got != tc.want {
				t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"gpt-4o", "gpt-4o", true},
		{"gpt-4o", "gpt-4o-mini", false},
		{"gpt-4o*", "gpt-4o-mini", true},
		{"gpt-4o*", "gpt-4", false},
		{"*-instruct", "llama-3-8b-instruct", true},
		{"meta-llama/*-70b*", "meta-llama/llama-3.1-70b-instruct", true},
		{"meta-llama/*-70b*", "meta-llama/llama-3.1-8b-instruct", false},
		{"*", "", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"?", "x", false}, // only * is special
		{strings.Repeat("*a", 50), strings.Repeat("a", 200), true},
		{strings.Repeat("*a", 50) + "b", strings.Repeat("a", 200), false},
	}
	for _, tc := range cases {
		if got := globMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestLowerASCIIKeepsOffsets(t *testing.T) {
	in := "İSTANBUL Straße ǅ KEY"
	got := lowerASCII(in)
	if len(got) != len(in) {
		t.Fatalf("length changed: %d -> %d", len(in), len(got))
	}
	if want := "İstanbul straße ǅ key"; got != want {
		t.Errorf("lowerASCII = %q, want %q", got, want)
	}
}

func TestNewTextCutsAtRuneBoundary(t *testing.T) {
	s := strings.Repeat("a", 9) + "€€" // € is 3 bytes: bytes 9-11 and 12-14
	tx := newText(FieldPrompt, s, 11)
	if !tx.truncated || tx.scanned != strings.Repeat("a", 9) {
		t.Errorf("scanned %q (truncated %v), want the 9 a's and truncated", tx.scanned, tx.truncated)
	}
	tx = newText(FieldPrompt, s, 12)
	if tx.scanned != strings.Repeat("a", 9)+"€" {
		t.Errorf("scanned %q, want 9 a's and one €", tx.scanned)
	}
	if tx = newText(FieldPrompt, s, 100); tx.truncated || tx.scanned != s {
		t.Errorf("short text was cut: %q", tx.scanned)
	}
}

func TestDigitCountAtLeastIsReusable(t *testing.T) {
	atLeast3 := digitCountAtLeast(3)
	for range 3 {
		if !atLeast3("a1b2c3") || atLeast3("12") {
			t.Fatal("digitCountAtLeast(3) changed between calls")
		}
	}
}
