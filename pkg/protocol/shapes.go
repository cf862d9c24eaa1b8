package protocol

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// This file holds the shape checks every format shares: hex, decimal, base64, IDs.

// lowerHex marks the bytes 0-9 and a-f.
var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

// isHex reports whether s is exactly n lowercase hex characters.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !lowerHex[s[i]] {
			return false
		}
	}
	return true
}

// IsSpanIDs reports whether traceID and spanID have the shapes an entry's columns must
// have: 32 and 16 lowercase hex characters.
func IsSpanIDs(traceID, spanID string) bool {
	return isHex(traceID, 32) && isHex(spanID, 16)
}

// isDecimal reports whether s is a non-negative decimal integer without leading zeros
// that fits in an int64.
func isDecimal(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 63)
	return err == nil
}

// wellFormedOperatorID reports whether s is "op_" followed by 16 lowercase hex characters.
func wellFormedOperatorID(s string) bool {
	return strings.HasPrefix(s, "op_") && isHex(s[len("op_"):], 16)
}

// decodeCanonicalBase64 decodes standard padded base64, refusing every non-canonical
// spelling (line breaks, non-zero padding bits), and requires n bytes unless n is negative.
func decodeCanonicalBase64(field, s string, n int) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("%w: %s is not canonical standard padded base64", ErrMalformed, field)
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%w: %s decodes to %d bytes, want %d", ErrMalformed, field, len(b), n)
	}
	return b, nil
}
