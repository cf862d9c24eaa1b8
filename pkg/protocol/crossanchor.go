package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// anchoredAtLayout is RFC 3339 in UTC with exactly nine fractional digits.
const anchoredAtLayout = "2006-01-02T15:04:05.000000000Z"

// FormatAnchoredAt writes t in UTC as RFC 3339 with exactly nine fractional digits, e.g.
// 2026-11-21T18:00:00.000000000Z: the only form anchored_at takes.
func FormatAnchoredAt(t time.Time) string {
	return t.UTC().Format(anchoredAtLayout)
}

// ParseAnchoredAt parses an anchored_at value. It accepts only the exact form
// FormatAnchoredAt writes (a four-digit year, a valid date and time, nine fractional digits,
// a capital T and Z, no offset); anything else is an error wrapping ErrMalformed.
func ParseAnchoredAt(s string) (time.Time, error) {
	t, err := time.Parse(anchoredAtLayout, s)
	if err != nil || FormatAnchoredAt(t) != s {
		return time.Time{}, fmt.Errorf("%w: anchored_at %q is not RFC 3339 UTC with nine fractional digits", ErrMalformed, s)
	}
	return t, nil
}

// Participant is one operator's part in a cross-anchor: its operator ID and the
// chain_signature it submitted, both as they appear in the receipt.
type Participant struct {
	// OperatorID is "op_" followed by 16 lowercase hex characters (see OperatorID).
	OperatorID string `json:"operator_id"`
	// ChainSignature is 64 lowercase hex characters.
	ChainSignature string `json:"chain_signature"`
}

// SortParticipants sorts ps into hash order: ascending bytewise order of OperatorID.
func SortParticipants(ps []Participant) {
	slices.SortStableFunc(ps, func(a, b Participant) int { return strings.Compare(a.OperatorID, b.OperatorID) })
}

// CrossAnchorHash returns hex(SHA-256(cs_1 ‖ … ‖ cs_n ‖ anchoredAt)), the cs_i being the
// participants' chain_signature hex strings in the order given and anchoredAt hashed exactly
// as given.
//
// It first checks shapes and order: at least one participant, every operator_id "op_" plus
// 16 lowercase hex, every chain_signature 64 lowercase hex, operator_ids strictly ascending
// bytewise (see SortParticipants; a duplicate is an error too), and anchoredAt of the form
// ParseAnchoredAt accepts. Any failure is an error wrapping ErrMalformed that names the
// offending participant's index.
func CrossAnchorHash(ps []Participant, anchoredAt string) (string, error) {
	if err := checkParticipants(ps); err != nil {
		return "", err
	}
	if err := checkParticipantOrder(ps); err != nil {
		return "", err
	}
	if _, err := ParseAnchoredAt(anchoredAt); err != nil {
		return "", err
	}
	h := sha256.New()
	for _, p := range ps {
		h.Write([]byte(p.ChainSignature))
	}
	h.Write([]byte(anchoredAt))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkParticipants checks the shape of every participant (not their order).
func checkParticipants(ps []Participant) error {
	if len(ps) == 0 {
		return fmt.Errorf("%w: no participating operators", ErrMalformed)
	}
	for i, p := range ps {
		if !wellFormedOperatorID(p.OperatorID) {
			return fmt.Errorf("%w: participant %d: operator_id %q is not \"op_\" and 16 lowercase hex characters", ErrMalformed, i, p.OperatorID)
		}
		if !isHex(p.ChainSignature, 64) {
			return fmt.Errorf("%w: participant %d (%s): chain_signature is not 64 lowercase hex characters", ErrMalformed, i, p.OperatorID)
		}
	}
	return nil
}

// checkParticipantOrder checks that operator IDs strictly ascend.
func checkParticipantOrder(ps []Participant) error {
	for i := 1; i < len(ps); i++ {
		switch prev, cur := ps[i-1].OperatorID, ps[i].OperatorID; {
		case prev == cur:
			return fmt.Errorf("%w: participant %d: duplicate operator_id %s (also participant %d)", ErrMalformed, i, cur, i-1)
		case prev > cur:
			return fmt.Errorf("%w: participant %d: operator_id %s sorts before participant %d's %s; participants must be in ascending operator_id order", ErrMalformed, i, cur, i-1, prev)
		}
	}
	return nil
}

// CrossAnchorLogContent returns the content a cross-anchor's hashedrekord log entry is made
// over: the 32 raw bytes that crossAnchorHash (64 lowercase hex characters) encodes. Any
// other shape is an error wrapping ErrMalformed.
func CrossAnchorLogContent(crossAnchorHash string) ([]byte, error) {
	if !isHex(crossAnchorHash, 64) {
		return nil, fmt.Errorf("%w: cross_anchor_hash is not 64 lowercase hex characters", ErrMalformed)
	}
	return hex.DecodeString(crossAnchorHash)
}

// Shape helpers shared by the cross-anchor, receipt and hashedrekord formats.

// topMember is one member of a top-level JSON object.
type topMember struct {
	name   string          // the key, unescaped
	rawKey []byte          // the key as written, quotes included
	value  json.RawMessage // the value as written
}

// splitTopLevel splits one JSON object in valid UTF-8 into its members, refusing duplicate
// names. It checks the object's own punctuation but not the values, which the caller must
// check (for a receipt, the receipt form checks the signed members and json.Valid the
// others).
func splitTopLevel(raw []byte) ([]topMember, error) {
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	i := skipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var members []topMember
	seen := make(map[string]bool)
	i = skipJSONSpace(raw, i+1)
	for empty := i < len(raw) && raw[i] == '}'; !empty; {
		end := endOfJSONString(raw, i)
		if end < 0 {
			return nil, fmt.Errorf("%w: expected a member name at offset %d", ErrMalformed, i)
		}
		rawKey := raw[i:end]
		name, err := jsonString("member name", rawKey)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: duplicate member %q", ErrMalformed, name)
		}
		seen[name] = true
		if i = skipJSONSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return nil, fmt.Errorf("%w: expected ':' at offset %d", ErrMalformed, i)
		}
		start := skipJSONSpace(raw, i+1)
		if i = endOfJSONValue(raw, start); i < 0 {
			return nil, fmt.Errorf("%w: member %q is not terminated", ErrMalformed, name)
		}
		value := bytes.TrimRight(raw[start:i], " \t\r\n")
		members = append(members, topMember{name: name, rawKey: rawKey, value: value})
		if raw[i] == '}' {
			break
		}
		i = skipJSONSpace(raw, i+1) // after the ','
	}
	if i = skipJSONSpace(raw, i+1); i != len(raw) { // after the '}'
		return nil, fmt.Errorf("%w: data after the JSON object at offset %d", ErrMalformed, i)
	}
	return members, nil
}

// wellFormedAnchorID reports whether s is "anchor-" + a valid date as YYYYMMDD + "-" +
// three digits.
func wellFormedAnchorID(s string) bool {
	const prefix = "anchor-"
	if len(s) != len(prefix)+8+1+3 || s[:len(prefix)] != prefix || s[len(prefix)+8] != '-' {
		return false
	}
	date, seq := s[len(prefix):len(prefix)+8], s[len(prefix)+9:]
	for _, part := range []string{date, seq} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	_, err := time.Parse("20060102", date)
	return err == nil
}

// jsonString decodes v as a JSON string. v must be known to hold one JSON value: when it
// has no backslash, the text between its first and last byte is taken as the value.
func jsonString(name string, v json.RawMessage) (string, error) {
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil // no escapes: the text is the value
	}
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", fmt.Errorf("%w: %s is not a JSON string", ErrMalformed, name)
	}
	return s, nil
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfJSONString returns the offset after the string literal starting at b[i], or -1.
func endOfJSONString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// endOfJSONValue returns the offset of the ',' or '}' that ends the member value starting
// at b[i], or -1 if there is none. Brackets outside strings are counted, not matched.
func endOfJSONValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = endOfJSONString(b, i); i < 0 {
				return -1
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				if b[i] == '}' {
					return i
				}
				return -1
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}
