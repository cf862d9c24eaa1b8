package protocol

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// VerifySignedHeader checks an export's header as a Submission keeps it: signed is the
// RFC 8785 JSON of the header members (ExportHeader.SignedBytes), sigB64 the envelope
// signature's value, pub the operator's key. In order: signed is canonical JSON of exactly
// the header members, names matched exactly and read as an export's header is read
// (docs/PROTOCOL.md §3), with a valid shape (else ErrMalformed); sigB64 is canonical base64
// of pub's Ed25519 signature over signed (else ErrMalformed or ErrSignature). It returns
// the header.
//
// The caller must still check that pub is the key registered for the operator, and that
// what it stores about the submission equals the header.
func VerifySignedHeader(signed []byte, sigB64 string, pub ed25519.PublicKey) (*ExportHeader, error) {
	if canon, err := canonical.Transform(signed); err != nil || !bytes.Equal(canon, signed) {
		return nil, fmt.Errorf("%w: signed header is not RFC 8785 JSON", ErrMalformed)
	}
	h, err := readSignedHeader(signed)
	if err != nil {
		return nil, err
	}
	if h.FirstSeq == 1 && h.FirstPrevHash != GenesisPrevHash {
		return nil, &MismatchError{Field: "first_prev_hash", Want: GenesisPrevHash, Got: h.FirstPrevHash}
	}
	if err := verifySignature(pub, signed, sigB64, "export signature"); err != nil {
		return nil, err
	}
	return h, nil
}

// readSignedHeader reads the header members from signed by the rules an export's header
// is read by (readHeaderMember): exactly the ten members, names matched exactly, and
// checks the header's shape.
func readSignedHeader(signed []byte) (*ExportHeader, error) {
	rd := jsonread.NewBytes(signed)
	if err := rd.Begin(jsonread.Object); err != nil {
		return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
	}
	var sh SignedHeader
	seen := map[string]bool{}
	for {
		rd.MaxToken = maxKeyBytes
		key, ok, err := rd.Key()
		if err != nil {
			return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
		}
		if !ok {
			break
		}
		name := string(key)
		if seen[name] || !slices.Contains(headerMembers, name) {
			return nil, fmt.Errorf("%w: signed header must have exactly its %d members, once each: %s", ErrMalformed, len(headerMembers), Quote(name))
		}
		seen[name] = true
		if err := readHeaderMember(rd, &sh, name); err != nil {
			return nil, fmt.Errorf("%w: signed header member %s: %w", ErrMalformed, Quote(name), err)
		}
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
	}
	if len(seen) != len(headerMembers) {
		return nil, fmt.Errorf("%w: signed header must have exactly its %d members", ErrMalformed, len(headerMembers))
	}
	if err := sh.Header.checkShape(); err != nil {
		return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
	}
	return &sh.Header, nil
}
