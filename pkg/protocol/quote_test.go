package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerptAndQuote(t *testing.T) {
	long := strings.Repeat("x", 1<<20+1<<19) // 1.5 MB
	euro := strings.Repeat("€", 100)         // 300 bytes, 3 a rune: 200 is not a boundary
	for _, c := range []struct {
		in, excerpt, quote string
	}{
		{"", "", `""`},
		{"GENESIS", "GENESIS", `"GENESIS"`},
		{strings.Repeat("a", MaxQuoted), strings.Repeat("a", MaxQuoted), `"` + strings.Repeat("a", MaxQuoted) + `"`},
		{strings.Repeat("a", MaxQuoted+1), strings.Repeat("a", MaxQuoted) + "… (201 bytes)", `"` + strings.Repeat("a", MaxQuoted) + `"… (201 bytes)`},
		{long, strings.Repeat("x", MaxQuoted) + "… (1572864 bytes)", `"` + strings.Repeat("x", MaxQuoted) + `"… (1572864 bytes)`},
		{euro, strings.Repeat("€", 66) + "… (300 bytes)", `"` + strings.Repeat("€", 66) + `"… (300 bytes)`},
		// Invalid UTF-8: cut back by at most three bytes looking for a rune's start.
		{strings.Repeat("\x80", 300), strings.Repeat("\x80", MaxQuoted-3) + "… (300 bytes)", `"` + strings.Repeat(`\x80`, MaxQuoted-3) + `"… (300 bytes)`},
	} {
		if got := Excerpt(c.in); got != c.excerpt {
			t.Errorf("Excerpt(%d bytes) = %.80q…, want %.80q…", len(c.in), got, c.excerpt)
		}
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote(%d bytes) = %.80q…, want %.80q…", len(c.in), got, c.quote)
		}
		if head, _ := excerpt(c.in); utf8.ValidString(c.in) && !utf8.ValidString(head) {
			t.Errorf("excerpt of valid UTF-8 (%d bytes) is not valid UTF-8", len(c.in))
		}
	}
}

// longName is a span name of 1.5 MB: the messages that quote it must not.
var longName = strings.Repeat("x", 3<<19)

// checkShortMessage fails unless err is an *EntryError for seq with reason, whose message
// quotes at most MaxQuoted bytes of the long value and says how long it was.
func checkShortMessage(tb testing.TB, err error, seq int64, reason string) {
	tb.Helper()
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Seq != seq || ee.Reason != reason {
		tb.Fatalf("got %.300v, want seq %d %s", err, seq, reason)
	}
	msg := err.Error()
	if len(msg) > 2*MaxQuoted+100 || !strings.Contains(msg, "… (1572864 bytes)") {
		tb.Errorf("message of %d bytes, want at most %d naming the length: %.400s", len(msg), 2*MaxQuoted+100, msg)
	}
}

// TestLongValuesAreQuotedShort changes the span_name column of an entry to 1.5 MB, and
// expects CheckEntry and VerifyExport to report column_mismatch in a short message, with
// the whole stated value still in MismatchError.Got.
func TestLongValuesAreQuotedShort(t *testing.T) {
	entries := testChain(t, 3, 64)
	entries[2].SpanName = longName
	err := CheckEntry(entries[2], hmac.New(sha256.New, testSecret))
	checkShortMessage(t, err, 3, ReasonColumn)
	var me *MismatchError
	if !errors.As(err, &me) || me.Field != "span_name" || me.Got != longName {
		t.Errorf("MismatchError %+.100v, want span_name with the whole value stated", me)
	}
	_, err = VerifyExport(bytes.NewReader(writeExportUnchecked(t, entries)), VerifyOptions{Secret: testSecret})
	checkShortMessage(t, err, 3, ReasonColumn)

	// The body names the span with 1.5 MB too, and the column differs in every byte.
	body := testBody(1, 64)
	body.Name = longName
	e, err := NewEntry(testSecret, 1, GenesisPrevHash, body)
	if err != nil {
		t.Fatal(err)
	}
	e.SpanName = strings.Repeat("z", len(longName))
	err = CheckEntry(e, nil)
	checkShortMessage(t, err, 1, ReasonColumn)
	if !errors.As(err, &me) || me.Want != longName {
		t.Errorf("MismatchError.Want is not the body's whole name")
	}
}

// TestLongMemberNameIsQuotedShort gives an export's last entry an unknown member with a
// name of 256 bytes (the reader's limit on a token): VerifyExport refuses it as malformed,
// quoting 200 bytes of the name.
func TestLongMemberNameIsQuotedShort(t *testing.T) {
	export := writeExport(t, testChain(t, 2, 64), testKey, false)
	at := bytes.LastIndex(export, []byte(`{"canonical_body_b64"`))
	if at < 0 {
		t.Fatal("no entry line in the export")
	}
	name := strings.Repeat("k", 256)
	tampered := append(append(bytes.Clone(export[:at+1]), `"`+name+`":1,`...), export[at+1:]...)
	_, err := VerifyExport(bytes.NewReader(tampered), VerifyOptions{Secret: testSecret})
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, want ErrMalformed", err)
	}
	if msg := err.Error(); strings.Contains(msg, name) || !strings.Contains(msg, `… (256 bytes)`) {
		t.Errorf("message quotes the whole name or not its length: %s", msg)
	}
}
