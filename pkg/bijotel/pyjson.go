package bijotel

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// appendPyString appends s as Python's json.dumps writes a str with its default
// ensure_ascii=True: printable ASCII but '"' and '\\' as is, the rest escaped (\n and the
// other short forms, every other character as \uxxxx, beyond the BMP as a surrogate pair).
// s must be valid UTF-8: Python's strings cannot hold anything else that Cairn would write.
func appendPyString(dst []byte, s string) ([]byte, error) {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), nil
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: string is not valid UTF-8", protocol.ErrMalformed)
	}
	// encoding/json's quoting is valid JSON for s; the receipt form is Python's
	// ensure_ascii spelling of any JSON string.
	quoted, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	py, err := canonical.ReceiptForm(quoted)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocol.ErrMalformed, err)
	}
	return append(dst, py...), nil
}

// PythonISOTime is t in UTC as Python's datetime.now(UTC).isoformat() writes it:
// "2026-06-15T03:00:05.123456+00:00", the fraction (microseconds, t truncated to them)
// left out when it is zero.
func PythonISOTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + "+00:00"
}

// errNewline is why decodeBase64 refuses a line break.
var errNewline = errors.New("line break in base64 data")

// decodeBase64 decodes padded standard base64 as Python's b64decode(s, validate=True)
// does: a character outside the alphabet (a line break included, which Go's decoder would
// skip) or wrong padding is an error; non-zero trailing bits are accepted, as Python
// accepts them.
func decodeBase64(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errNewline
	}
	return base64.StdEncoding.DecodeString(s)
}

// isHash reports whether s is 64 lowercase hex digits, as Python's hexdigest() writes a
// SHA-256 or HMAC-SHA256.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
