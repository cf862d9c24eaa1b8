package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// OperatorKeys answers GET /federation/operator/{id}/keys: the keys an operator held,
// oldest first, each rotation with the record the federation logged. The federation's
// word: check each record against its log (pkg/audit.VerifyKeyHistory).
type OperatorKeys struct {
	OperatorID string        `json:"operator_id"`
	Federation string        `json:"federation"`
	Keys       []OperatorKey `json:"keys"`
}

// OperatorKey is one key of an operator's history.
type OperatorKey struct {
	PublicKeyPEM string       `json:"public_key_pem"`
	Fingerprint  string       `json:"fingerprint"`
	KeyID        string       `json:"key_id"`
	ValidFrom    string       `json:"valid_from"`
	ValidUntil   *string      `json:"valid_until"`
	Rotation     *KeyRotation `json:"rotation"`
}

// KeyRotation is what the federation shows of one rotation.
type KeyRotation struct {
	Record          protocol.KeyRotationRecord `json:"record"`
	TLogLogIndex    *int64                     `json:"tlog_log_index"`
	TLogURL         string                     `json:"tlog_url,omitempty"`
	RotationAt      string                     `json:"rotation_at,omitempty"`
	OldKeySignature string                     `json:"old_key_signature,omitempty"`
	NewKeySignature string                     `json:"new_key_signature,omitempty"`
}

// OperatorKeys returns the key history of operator id.
func (c *Client) OperatorKeys(ctx context.Context, id string) (*OperatorKeys, error) {
	return get[OperatorKeys](ctx, c, request{method: http.MethodGet, path: "/federation/operator/" + url.PathEscape(id) + "/keys"})
}
