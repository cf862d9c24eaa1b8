package protocol

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is the most bytes of a value (a span name, a body member, a stated hash) that
// an error message quotes: a message about a 1.5 MB span name should not be 1.5 MB long.
// Errors' structured fields (MismatchError's Want and Got) keep the whole value.
const MaxQuoted = 200

// Excerpt returns s for a message: s itself when it is at most MaxQuoted bytes long, and
// otherwise its first MaxQuoted bytes, cut back to a UTF-8 boundary, followed by
// "… (N bytes)" with s's whole length.
func Excerpt(s string) string {
	head, cut := excerpt(s)
	if !cut {
		return s
	}
	return head + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Quote is strconv.Quote of Excerpt's head: s quoted in Go syntax when it is at most
// MaxQuoted bytes long, and otherwise its first MaxQuoted bytes quoted, followed by
// "… (N bytes)".
func Quote(s string) string {
	head, cut := excerpt(s)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// excerpt returns s's first MaxQuoted bytes, cut back to the start of a rune (by at most
// three bytes, so invalid UTF-8 is cut too), and whether that is shorter than s.
func excerpt(s string) (string, bool) {
	if len(s) <= MaxQuoted {
		return s, false
	}
	n := MaxQuoted
	for i := 0; i < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n], true
}
