// Package canonical serializes JSON in the two canonical forms Cairn signs: RFC 8785 (JCS)
// and the receipt payload form.
//
// Both forms read exactly one JSON text (RFC 8259) in UTF-8 and are strict about it: invalid
// UTF-8, a lone surrogate escape, a duplicate object key (after unescaping), data after the
// value, or nesting deeper than 1000 levels is an error. Errors wrap ErrInvalid. Nothing in
// this package panics on input.
package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about the input: it is not JSON, or not JSON that
// the requested form can represent exactly.
var ErrInvalid = errors.New("canonical: invalid input")

// maxSafeInteger is 2^53−1, the largest integer that IEEE-754 doubles, and therefore
// JavaScript and every JCS implementation, hold exactly together with all smaller ones.
const maxSafeInteger = 1<<53 - 1

// Transform returns the RFC 8785 JSON Canonicalization Scheme form of the JSON text in.
//
// The output has no whitespace; object members are sorted by key compared as UTF-16 code
// units; strings escape only '"', '\\' and the controls below U+0020 (as \b \f \n \r \t, or
// \u00xx in lowercase hex) and keep everything else as literal UTF-8; numbers are written as
// ECMAScript's Number.prototype.toString writes the nearest IEEE-754 double (so 4.50 becomes
// 4.5, 2e-3 becomes 0.002, 1E30 becomes 1e+30 and -0 becomes 0).
//
// Besides the errors listed in the package documentation, a number that overflows a double
// and an integer literal (no fraction, no exponent) whose magnitude exceeds 2^53−1 are
// errors wrapping ErrInvalid: such an integer would be silently rounded, so it is refused
// instead (carry it as a string). So that Transform accepts its own output, a number
// written with a fraction or exponent is refused too when its double lies above 2^53−1 and
// below 1e21 in magnitude: every such double is an integer, which ECMAScript writes as a
// plain integer literal (1.5e20 is refused; 1.5e21, written 1.5e+21, is not).
func Transform(in []byte) ([]byte, error) {
	root, err := parse(in)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(in))
	return jcs.append(out, &root)
}

// Marshal encodes v with encoding/json (HTML escaping off) and returns the Transform of
// the result. An encoding/json error, and every Transform error, wraps ErrInvalid. As with
// Transform, an integer of any Go type beyond ±(2^53−1), and a float64 above 2^53−1 and
// below 1e21 in magnitude, is refused.
//
// A value made only of the types span attributes are made of (nil, bool, string, int64
// and the other common integers, float64, their slices, []any and map[string]any) is
// written directly, several times faster, with the same result.
func Marshal(v any) ([]byte, error) {
	if out, direct, err := appendGo(make([]byte, 0, 1024), v, 0); direct {
		return out, err
	}
	return marshalViaJSON(v)
}

// marshalViaJSON is Marshal the long way: encoding/json's text, then its Transform.
func marshalViaJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Transform(buf.Bytes())
}

// ReceiptForm returns the receipt payload form of the JSON text in: the bytes Python's
// json.dumps(json.loads(in), sort_keys=True, separators=(",", ":")) produces with its
// default ensure_ascii=True.
//
// The output has no whitespace; object members are sorted by key in Unicode code point
// order; strings escape '"', '\\', \b \f \n \r \t, every other control below U+0020, DEL
// (U+007F) and every non-ASCII character as \uxxxx in lowercase hex (characters beyond the
// BMP as a surrogate pair), and keep '/' and the rest of printable ASCII literal; integers
// are written as their exact decimal digits, of any size, with -0 written as 0.
//
// Besides the errors listed in the package documentation, any number with a fraction or
// an exponent is an error wrapping ErrInvalid: receipts carry none, and Python's float
// formatting is not reproduced here.
func ReceiptForm(in []byte) ([]byte, error) {
	root, err := parse(in)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(in))
	return receipt.append(out, &root)
}

// invalidf returns an error wrapping ErrInvalid.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
