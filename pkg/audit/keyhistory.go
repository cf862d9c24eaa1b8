package audit

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// Records are the federation's public records an audit reads offline, fetched once
// (cairn federation audit --fetch-records): per participant, its key history with each
// rotation's logged record and the log's proof of it, and its submissions.
type Records struct {
	// Service is the federation the records were read from; FetchedAt when (RFC 3339).
	Service   string            `json:"service"`
	FetchedAt string            `json:"fetched_at"`
	Operators []OperatorRecords `json:"operators"`
}

// OperatorRecords are one operator's records.
type OperatorRecords struct {
	OperatorID string `json:"operator_id"`
	// Keys are the keys it held, oldest first: the registered one, then one per rotation.
	Keys []HeldKey `json:"keys"`
	// Submissions are its accepted submissions as the federation lists them (newest
	// first, one page): its word, used to explain, never to pass a check.
	Submissions []Submission `json:"submissions"`
}

// HeldKey is one key of an operator's history.
type HeldKey struct {
	PublicKeyPEM string `json:"public_key_pem"`
	ValidFrom    string `json:"valid_from,omitempty"`
	ValidUntil   string `json:"valid_until,omitempty"`
	// Rotation proves the move to this key; nil for the registered key.
	Rotation *Rotation `json:"rotation,omitempty"`
}

// Rotation is the evidence of one key rotation.
type Rotation struct {
	// Record is the key-rotation record the federation logged, as it logged it.
	Record protocol.KeyRotationRecord `json:"record"`
	// TLogLogIndex is the record's index in the federation's log; LogEntry the log's
	// proof bundle of that entry (read from the log when the records were fetched).
	TLogLogIndex int64               `json:"tlog_log_index"`
	LogEntry     *protocol.LogBundle `json:"log_entry,omitempty"`
	// RotationAt, OldKeySignature and NewKeySignature are the operator's signed rotation
	// statement (protocol.KeyRotation), when the federation still holds it: the retired
	// key's and the new key's signatures over new_public_key ‖ rotation_at.
	RotationAt      string `json:"rotation_at,omitempty"`
	OldKeySignature string `json:"old_key_signature,omitempty"`
	NewKeySignature string `json:"new_key_signature,omitempty"`
}

// Submission is one accepted submission, as the federation lists it.
type Submission struct {
	SubmissionID   string  `json:"submission_id"`
	FirstSeq       int64   `json:"first_seq"`
	LastSeq        int64   `json:"last_seq"`
	ChainSignature string  `json:"chain_signature"`
	AnchorID       *string `json:"anchor_id"`
}

// Operator returns the records of operator id; nil when there are none.
func (r *Records) Operator(id string) *OperatorRecords {
	if r == nil {
		return nil
	}
	for i := range r.Operators {
		if r.Operators[i].OperatorID == id {
			return &r.Operators[i]
		}
	}
	return nil
}

// Trust is what key-history checks trust.
type Trust struct {
	// FederationKeys are the federation keys whose logged records count (the audit's
	// trusted key and the key that signed the receipt).
	FederationKeys []ed25519.PublicKey
	// LogKey is the transparency log's key.
	LogKey crypto.PublicKey
}

// VerifiedKey is a key a verified history gives an operator.
type VerifiedKey struct {
	Key ed25519.PublicKey
	// How says what proves it: "registered key" or the rotation's log index and what signs it.
	How string
}

// VerifyKeyHistory checks o's key history and returns its keys, oldest first. The first
// key's ID must be the operator ID. Each later key needs its rotation: a key_rotation
// record of this operator from the previous key to this one, whose SHA-512 a log entry
// records under a trusted federation key (Ed25519ph), that entry proved included by the
// log's key; and, when the operator's statement is present, the retired key's and the
// new key's signatures over new_public_key ‖ rotation_at. The first rotation that does
// not verify ends the history: the keys before it are returned with the error.
func VerifyKeyHistory(o *OperatorRecords, t Trust) ([]VerifiedKey, error) {
	if len(o.Keys) == 0 {
		return nil, fmt.Errorf("%w: no keys recorded for %s", protocol.ErrMalformed, o.OperatorID)
	}
	first, err := protocol.ParsePublicKeyPEM([]byte(o.Keys[0].PublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("%s's first key: %w", o.OperatorID, err)
	}
	if id := protocol.OperatorID(first); id != o.OperatorID {
		return nil, &protocol.MismatchError{Field: "first key's operator ID", Want: o.OperatorID, Got: id}
	}
	keys := []VerifiedKey{{Key: first, How: "its registered key"}}
	for i := 1; i < len(o.Keys); i++ {
		k, err := verifyRotation(o, keys[i-1].Key, &o.Keys[i], t)
		if err != nil {
			return keys, fmt.Errorf("rotation %d of %s: %w", i, o.OperatorID, err)
		}
		keys = append(keys, *k)
	}
	return keys, nil
}

// verifyRotation checks the move from prev to k.
func verifyRotation(o *OperatorRecords, prev ed25519.PublicKey, k *HeldKey, t Trust) (*VerifiedKey, error) {
	rot := k.Rotation
	if rot == nil {
		return nil, fmt.Errorf("%w: no rotation record", protocol.ErrNoTrustedKey)
	}
	rec := rot.Record
	if rec.Type != protocol.RecordKeyRotation || rec.OperatorID != o.OperatorID {
		return nil, fmt.Errorf("%w: the record is a %q of %q, not a %s of %s", protocol.ErrMalformed, rec.Type, rec.OperatorID,
			protocol.RecordKeyRotation, o.OperatorID)
	}
	old, err := protocol.ParsePublicKeyPEM([]byte(rec.OldPublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("old_public_key_pem: %w", err)
	}
	next, err := protocol.ParsePublicKeyPEM([]byte(rec.NewPublicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("new_public_key_pem: %w", err)
	}
	held, err := protocol.ParsePublicKeyPEM([]byte(k.PublicKeyPEM))
	if err != nil {
		return nil, err
	}
	if !old.Equal(prev) || !next.Equal(held) {
		return nil, fmt.Errorf("%w: the record rotates %s to %s, the history %s to %s", protocol.ErrMismatch,
			protocol.Fingerprint(old), protocol.Fingerprint(next), protocol.Fingerprint(prev), protocol.Fingerprint(held))
	}
	if err := verifyLogged(rot, t); err != nil {
		return nil, err
	}
	how := fmt.Sprintf("rotated to at log index %d (record signed by the federation, proved in its log)", rot.TLogLogIndex)
	if rot.OldKeySignature == "" {
		return &VerifiedKey{Key: next, How: how + "; the federation kept no copy of the retired key's signature"}, nil
	}
	msg := protocol.RotationMessage(rec.NewPublicKeyPEM, rot.RotationAt)
	for _, s := range []struct {
		name string
		key  ed25519.PublicKey
		sig  string
	}{{"old_key_signature", old, rot.OldKeySignature}, {"new_key_signature", next, rot.NewKeySignature}} {
		sig, err := base64.StdEncoding.DecodeString(s.sig)
		if err != nil || !ed25519.Verify(s.key, msg, sig) {
			return nil, fmt.Errorf("%w: the rotation's %s", protocol.ErrSignature, s.name)
		}
	}
	return &VerifiedKey{Key: next, How: how + " and signed by the retired key"}, nil
}

// verifyLogged checks that the log holds rot's record under a trusted federation key.
func verifyLogged(rot *Rotation, t Trust) error {
	if rot.LogEntry == nil {
		return fmt.Errorf("%w: no log entry of the record", protocol.ErrNotIncluded)
	}
	if t.LogKey == nil {
		return fmt.Errorf("%w: no log key to prove the record's entry", protocol.ErrNoTrustedKey)
	}
	// A bundle read from tlog-tiles has no signed entry timestamp: its index is then the
	// one its inclusion proof proves.
	index := rot.LogEntry.LogIndex
	if rot.LogEntry.Verification.SignedEntryTimestamp == "" {
		index = rot.LogEntry.Verification.InclusionProof.LogIndex
	}
	if index != rot.TLogLogIndex {
		return &protocol.MismatchError{Field: "log entry index", Want: fmt.Sprint(rot.TLogLogIndex), Got: fmt.Sprint(index)}
	}
	body, err := protocol.VerifyLogBundle(rot.LogEntry, protocol.LogVerifyOptions{Key: t.LogKey, AllowMissingSET: true})
	if err != nil {
		return err
	}
	content, err := canonical.Marshal(rot.Record)
	if err != nil {
		return err
	}
	err = fmt.Errorf("%w: no federation key to check the record's signature", protocol.ErrNoTrustedKey)
	for _, k := range t.FederationKeys {
		if err = protocol.VerifyHashedRekord(body, content, k); err == nil || !errors.Is(err, protocol.ErrKeyNotTrusted) {
			return err
		}
	}
	return err
}
