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

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
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
		return time.Time{}, fmt.Errorf("%w: anchored_at %s is not RFC 3339 UTC with nine fractional digits", ErrMalformed, Quote(s))
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
			return fmt.Errorf("%w: participant %d: operator_id %s is not \"op_\" and 16 lowercase hex characters", ErrMalformed, i, Quote(p.OperatorID))
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

// splitTopLevel splits one JSON object into its members. It reads the whole object with
// the package's one tokenizer (internal/jsonread), so the object and every value in it
// follow docs/PROTOCOL.md §1's rules: strict UTF-8, no lone surrogates, no member name
// repeated in any object. The caller must still check what the values mean (for a
// receipt, the receipt form checks the signed members).
func splitTopLevel(raw []byte) ([]topMember, error) {
	rd := jsonread.NewBytes(raw)
	rd.RefuseDuplicates = true
	if k, err := rd.Peek(); err != nil || k != jsonread.Object {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	if err := rd.Begin(jsonread.Object); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var members []topMember
	for {
		key, ok, err := rd.Key()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if !ok {
			break
		}
		name := string(key)
		start := rd.Offset()
		if err := rd.Skip(); err != nil {
			return nil, fmt.Errorf("%w: member %s: %w", ErrMalformed, Quote(name), err)
		}
		value := bytes.TrimLeft(raw[start:rd.Offset()], " \t\r\n")
		members = append(members, topMember{name: name, rawKey: canonical.AppendString(nil, name), value: value})
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
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

// jsonString decodes v, which must be exactly one JSON string, by the rules of the
// package's one tokenizer.
func jsonString(name string, v json.RawMessage) (string, error) {
	rd := jsonread.NewBytes(v)
	if k, err := rd.Peek(); err != nil || k != jsonread.String {
		return "", fmt.Errorf("%w: %s is not a JSON string", ErrMalformed, name)
	}
	s, _, err := rd.String()
	if err == nil {
		err = rd.End()
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s is not a JSON string: %w", ErrMalformed, name, err)
	}
	return string(s), nil
}
