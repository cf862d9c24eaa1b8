package protocol

import (
	"crypto/ed25519"

	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// The records a federation logs besides cross-anchors. Each is logged as a hashedrekord
// (NewHashedRekord) over its RFC 8785 JSON, signed by the federation key, so that the log
// holds when the federation said what.
type (
	// GenesisRecord states a federation's public key: the first record it logs.
	GenesisRecord struct {
		Type         string `json:"type"`       // "genesis"
		Federation   string `json:"federation"` // "<namespace>/<name>"
		PublicKeyPEM string `json:"public_key_pem"`
	}

	// RegistrationRecord states that an operator registered a key, with its proof.
	RegistrationRecord struct {
		Type              string `json:"type"` // "registration"
		Federation        string `json:"federation"`
		OperatorID        string `json:"operator_id"`
		OrgName           string `json:"org_name"`
		PublicKeyPEM      string `json:"public_key_pem"`
		ProofOfPossession string `json:"proof_of_possession"`
		// Challenge is, for a registration through the HTTP API without a proof of
		// possession, the challenge the key signed instead; absent otherwise, so records
		// logged before it existed read the same.
		Challenge *SignedChallenge `json:"challenge,omitempty"`
	}

	// SignedChallenge is a registration challenge and the registering key's signature
	// over its UTF-8 bytes (VerifyChallenge).
	SignedChallenge struct {
		Nonce     string `json:"nonce"`
		Signature string `json:"signature"`
	}

	// KeyRotationRecord states that an operator moved from one key to another.
	KeyRotationRecord struct {
		Type            string `json:"type"` // "key_rotation"
		Federation      string `json:"federation"`
		OperatorID      string `json:"operator_id"`
		OldPublicKeyPEM string `json:"old_public_key_pem"`
		NewPublicKeyPEM string `json:"new_public_key_pem"`
		ValidFrom       string `json:"valid_from"`
	}

	// FederationKeyRotationRecord states that a federation moved to a new signing key.
	// Both signatures cover RotationMessage(NewPublicKeyPEM, RotatedAt); it is logged
	// under the old key.
	FederationKeyRotationRecord struct {
		Type            string `json:"type"` // "federation_key_rotation"
		Federation      string `json:"federation"`
		OldPublicKeyPEM string `json:"old_public_key_pem"`
		NewPublicKeyPEM string `json:"new_public_key_pem"`
		RotatedAt       string `json:"rotated_at"`
		OldKeySignature string `json:"old_key_signature"`
		NewKeySignature string `json:"new_key_signature"`
	}

	// WithdrawalRecord states that an operator withdrew, with its signed statement.
	WithdrawalRecord struct {
		Type       string `json:"type"` // "withdrawal"
		Federation string `json:"federation"`
		Withdrawal
	}
)

// Record types.
const (
	RecordGenesis      = "genesis"
	RecordRegistration = "registration"
	RecordWithdrawal   = "withdrawal"
	RecordKeyRotation  = "key_rotation"

	RecordFederationKeyRotation = "federation_key_rotation"
)

// NewRecordEntry returns the hashedrekord body that logs record (one of the *Record
// types) under the federation key.
func NewRecordEntry(record any, key ed25519.PrivateKey) ([]byte, error) {
	content, err := canonical.Marshal(record)
	if err != nil {
		return nil, err
	}
	return NewHashedRekord(content, key)
}

// SuspensionRecord states that a federation's administrators suspended an operator (Type
// "suspension"), or resumed it (Type "resumption", Reason and Sources empty). At is RFC
// 3339 UTC in whole seconds; Sources are "gitops", "api" or both.
type SuspensionRecord struct {
	Type       string   `json:"type"` // "suspension" or "resumption"
	Federation string   `json:"federation"`
	OperatorID string   `json:"operator_id"`
	At         string   `json:"at"`
	Reason     string   `json:"reason"`
	Sources    []string `json:"sources"`
}

// Suspension record types.
const (
	RecordSuspension = "suspension"
	RecordResumption = "resumption"
)
