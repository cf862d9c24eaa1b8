package protocol

import (
	"crypto/ed25519"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// RenameLead starts every rename message: no other form an operator key signs starts with
// it (docs/PROTOCOL.md §6, "Signed forms").
const RenameLead = "rename "

// Limits on what a rename states, in characters (the CRD's limits).
const (
	OrgNameMaxLen = 253
	ContactMaxLen = 320
)

// Rename is an operator's signed statement of its organization's name and contact: what
// the federation shows of it from At on. The organization name a registration's proof of
// possession signs ("register <org_name> <fingerprint>") names no contact; a rename sent
// with the registration, or later, is what signs one. Signature is the operator's current
// key's signature over RenameMessage, padded standard base64.
type Rename struct {
	OperatorID string `json:"operator_id"`
	OrgName    string `json:"org_name"`
	// Contact may be empty: the organization gives none.
	Contact string `json:"contact"`
	// At is an RFC 3339 time; the signature covers it exactly as sent.
	At        string `json:"at"`
	Signature string `json:"signature"`
}

// renameStatement is what a rename signs, in RFC 8785 member order.
type renameStatement struct {
	At         string `json:"at"`
	Contact    string `json:"contact"`
	OperatorID string `json:"operator_id"`
	OrgName    string `json:"org_name"`
}

// RenameMessage returns the bytes a rename's signature covers: RenameLead, then the RFC
// 8785 JSON of {"at", "contact", "operator_id", "org_name"}, each exactly as sent. JSON
// makes the message one reading only, whatever the name and contact hold. Errors wrap
// ErrMalformed when a field is not valid UTF-8 (its JSON would not be its bytes).
func RenameMessage(operatorID, orgName, contact, at string) ([]byte, error) {
	for name, v := range map[string]string{"operator_id": operatorID, "org_name": orgName, "contact": contact, "at": at} {
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("%w: rename %s is not valid UTF-8", ErrMalformed, name)
		}
	}
	body, err := canonical.Marshal(renameStatement{At: at, Contact: contact, OperatorID: operatorID, OrgName: orgName})
	if err != nil {
		return nil, fmt.Errorf("%w: rename: %w", ErrMalformed, err)
	}
	return append([]byte(RenameLead), body...), nil
}

// NewRename returns the rename of operatorID (the operator's registered ID, which a
// rotation does not change) to orgName and contact, dated at (RFC 3339, UTC, whole
// seconds) and signed by key, the operator's current key. Errors wrap ErrMalformed when
// key is not 64 bytes or a field breaks Rename.Verify's shape rules.
func NewRename(key ed25519.PrivateKey, operatorID, orgName, contact string, at time.Time) (Rename, error) {
	r := Rename{OperatorID: operatorID, OrgName: orgName, Contact: contact, At: at.UTC().Format(time.RFC3339)}
	if len(key) != ed25519.PrivateKeySize {
		return Rename{}, fmt.Errorf("%w: Ed25519 private key is %d bytes, want %d", ErrMalformed, len(key), ed25519.PrivateKeySize)
	}
	if err := r.checkShape(); err != nil {
		return Rename{}, err
	}
	msg, err := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At)
	if err != nil {
		return Rename{}, err
	}
	r.Signature = signB64(key, msg)
	return r, nil
}

// Verify is VerifyAs for an operator that never rotated its key: r must name
// OperatorID(pub).
func (r Rename) Verify(pub ed25519.PublicKey, now time.Time) error {
	if err := checkOperatorKey(pub, r.OperatorID, "rename"); err != nil {
		return err
	}
	return r.VerifyAs(r.OperatorID, pub, now)
}

// VerifyAs checks, in order: pub is 32 bytes (else ErrMalformed); r names operatorID, the
// operator's registered ID (else ErrKeyNotTrusted); org_name is 1 to 253 characters and
// contact at most 320, both valid UTF-8 (else ErrMalformed); at parses as RFC 3339 (else
// ErrMalformed) and is not more than StatementMaxAge after now (else ErrExpired); the
// signature is canonical base64 (else ErrMalformed) of pub's signature over
// RenameMessage (else ErrSignature).
//
// A rename states what holds from At on, so it has no lower time bound here: the caller
// must still check that pub is the operator's current key and that At is later than the
// At of the rename in force (an older statement replayed is refused by order, not by
// age). Nothing compared here is secret.
func (r Rename) VerifyAs(operatorID string, pub ed25519.PublicKey, now time.Time) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: Ed25519 public key is %d bytes, want %d", ErrMalformed, len(pub), ed25519.PublicKeySize)
	}
	if r.OperatorID != operatorID {
		return fmt.Errorf("%w: rename names operator %s, not %q", ErrKeyNotTrusted, Quote(r.OperatorID), operatorID)
	}
	if err := r.checkShape(); err != nil {
		return err
	}
	at, err := r.Time()
	if err != nil {
		return err
	}
	if at.Sub(now) > StatementMaxAge {
		return fmt.Errorf("%w: rename at %s is more than %s after now (%s)", ErrExpired, r.At, StatementMaxAge, now.UTC().Format(time.RFC3339))
	}
	msg, err := RenameMessage(r.OperatorID, r.OrgName, r.Contact, r.At)
	if err != nil {
		return err
	}
	return verifySignature(pub, msg, r.Signature, "rename signature")
}

// Time parses r.At as RFC 3339; errors wrap ErrMalformed.
func (r Rename) Time() (time.Time, error) {
	t, err := time.Parse(time.RFC3339, r.At)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: rename at is not an RFC 3339 time", ErrMalformed)
	}
	return t, nil
}

// checkShape checks the lengths and encoding of org_name and contact.
func (r Rename) checkShape() error {
	switch n := utf8.RuneCountInString(r.OrgName); {
	case !utf8.ValidString(r.OrgName) || !utf8.ValidString(r.Contact):
		return fmt.Errorf("%w: rename org_name or contact is not valid UTF-8", ErrMalformed)
	case n < 1 || n > OrgNameMaxLen:
		return fmt.Errorf("%w: rename org_name is %d characters, want 1 to %d", ErrMalformed, n, OrgNameMaxLen)
	case utf8.RuneCountInString(r.Contact) > ContactMaxLen:
		return fmt.Errorf("%w: rename contact is over %d characters", ErrMalformed, ContactMaxLen)
	}
	return nil
}

// RenameRecord states that the federation accepted an operator's rename: the operator's
// signed statement, and the key that signed it (the operator's current key then).
type RenameRecord struct {
	Type         string `json:"type"` // "rename"
	Federation   string `json:"federation"`
	PublicKeyPEM string `json:"public_key_pem"`
	Rename
}

// RecordRename is a RenameRecord's type.
const RecordRename = "rename"
