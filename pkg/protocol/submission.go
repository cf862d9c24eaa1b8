package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// VerifySignedHeader checks an export's header as a Submission keeps it: signed is the
// RFC 8785 JSON of the header members (ExportHeader.SignedBytes), sigB64 the envelope
// signature's value, pub the operator's key. In order: signed is canonical JSON of exactly
// the header members with a valid shape (else ErrMalformed); sigB64 is canonical base64
// of pub's Ed25519 signature over signed (else ErrMalformed or ErrSignature). It returns
// the header.
//
// The caller must still check that pub is the key registered for the operator, and that
// what it stores about the submission equals the header.
func VerifySignedHeader(signed []byte, sigB64 string, pub ed25519.PublicKey) (*ExportHeader, error) {
	if canon, err := canonical.Transform(signed); err != nil || !bytes.Equal(canon, signed) {
		return nil, fmt.Errorf("%w: signed header is not RFC 8785 JSON", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(signed))
	dec.DisallowUnknownFields()
	var h ExportHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(signed, &members); err != nil || len(members) != len(headerMembers) {
		return nil, fmt.Errorf("%w: signed header must have exactly its %d members", ErrMalformed, len(headerMembers))
	}
	if err := h.checkShape(); err != nil {
		return nil, fmt.Errorf("%w: signed header: %w", ErrMalformed, err)
	}
	if h.FirstSeq == 1 && h.FirstPrevHash != GenesisPrevHash {
		return nil, &MismatchError{Field: "first_prev_hash", Want: GenesisPrevHash, Got: h.FirstPrevHash}
	}
	if err := verifySignature(pub, signed, sigB64, "export signature"); err != nil {
		return nil, err
	}
	return &h, nil
}
