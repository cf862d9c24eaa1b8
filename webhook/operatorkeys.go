package webhook

import (
	"net/http"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// operatorKeys answers GET /federation/operator/{id}/keys: the keys an operator held, with
// each rotation's record as the federation logged it, so that an auditor can tie an export
// signed by a rotated key to its operator. It is the federation's word until checked: the
// record's SHA-512 is in the log at tlog_log_index, signed by the federation key.
type operatorKeys struct {
	OperatorID string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	Federation string `json:"federation" doc:"The federation as its records name it: <namespace>/<name>."`
	// Keys are oldest first.
	Keys []operatorKey `json:"keys" doc:"The keys the operator held, oldest first: the registered key, then one per rotation; the last is current."`
}

// operatorKey is one key of an operator's history.
type operatorKey struct {
	PublicKeyPEM string  `json:"public_key_pem"`
	Fingerprint  string  `json:"fingerprint" doc:"Hex SHA-256 of the raw public key."`
	KeyID        string  `json:"key_id" doc:"The key's ID (op_ and 16 hex of its fingerprint): the operator ID for the registered key only."`
	ValidFrom    string  `json:"valid_from" doc:"When the key took effect, RFC 3339 UTC."`
	ValidUntil   *string `json:"valid_until" doc:"When a rotation replaced it; null for the current key."`
	// Rotation is null for the registered key.
	Rotation *keyRotationEvidence `json:"rotation" doc:"How the operator moved to this key; null for the registered key."`
}

// keyRotationEvidence is what proves one rotation.
type keyRotationEvidence struct {
	Record       protocol.KeyRotationRecord `json:"record" doc:"The key_rotation record the federation logs, member for member: its RFC 8785 JSON's SHA-512 is the log entry's data hash."`
	TLogLogIndex *int64                     `json:"tlog_log_index" doc:"The record's index in the federation's log; null until logged."`
	TLogURL      string                     `json:"tlog_url,omitempty" doc:"Where the log serves the entry, when it names one."`
	// The operator's signed statement, while the FederationOperator keeps it (its last
	// rotation): the retired key's and the new key's signatures over new_public_key ‖
	// rotation_at.
	RotationAt      string `json:"rotation_at,omitempty" doc:"The operator's rotation statement, when the federation still holds it (the last rotation): its time."`
	OldKeySignature string `json:"old_key_signature,omitempty" doc:"The retired key's signature over new_public_key ‖ rotation_at, base64; with rotation_at."`
	NewKeySignature string `json:"new_key_signature,omitempty" doc:"The new key's signature over the same bytes, base64; with rotation_at."`
}

// serveOperatorKeys answers GET /federation/operator/{id}/keys.
func (s *Server) serveOperatorKeys(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	if !operatorIDPattern.MatchString(id) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "invalid_operator_id",
			message: "an operator ID is op_ and 16 lowercase hex characters"})
		return
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		s.fail(ctx, w, "read the federation", err)
		return
	}
	fo, err := s.cachedRegistered(ctx, fed.Namespace, id)
	if err != nil {
		s.fail(ctx, w, "read the operator", err)
		return
	}
	writeJSON(w, http.StatusOK, keyHistoryOf(fed.Namespace+"/"+fed.Name, id, fo))
}

// keyHistoryOf is fo's key history, each rotation's record built as the controller logs
// it (controllers/operator_controller.go, logRecords).
func keyHistoryOf(federation, id string, fo *fv1.FederationOperator) operatorKeys {
	out := operatorKeys{OperatorID: id, Federation: federation, Keys: []operatorKey{}}
	h := fo.Status.KeyHistory
	for i, k := range h {
		key := operatorKey{PublicKeyPEM: string(k.PublicKeyPEM), Fingerprint: string(k.Fingerprint),
			KeyID: protocol.OperatorID(mustParse(string(k.PublicKeyPEM))), ValidFrom: k.ValidFrom.UTC().Format(time.RFC3339)}
		if k.ValidUntil != nil {
			until := k.ValidUntil.UTC().Format(time.RFC3339)
			key.ValidUntil = &until
		}
		if i > 0 {
			rot := &keyRotationEvidence{Record: protocol.KeyRotationRecord{Type: protocol.RecordKeyRotation, Federation: federation,
				OperatorID: id, OldPublicKeyPEM: string(h[i-1].PublicKeyPEM), NewPublicKeyPEM: string(k.PublicKeyPEM), ValidFrom: key.ValidFrom}}
			if e := k.LogEntry; e != nil {
				index := e.LogIndex
				rot.TLogLogIndex, rot.TLogURL = &index, e.URL
			}
			if kr := fo.Spec.KeyRotation; kr != nil && i == len(h)-1 && fo.Spec.PublicKeyPEM == k.PublicKeyPEM {
				rot.RotationAt, rot.OldKeySignature, rot.NewKeySignature = string(kr.RotationAt), string(kr.OldKeySignature), string(kr.NewKeySignature)
			}
			key.Rotation = rot
		}
		out.Keys = append(out.Keys, key)
	}
	return out
}
