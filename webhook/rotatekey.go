package webhook

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"slices"
	"strings"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// rotateKeyRequest is the body of POST /federation/rotate-key: the seed's key-rotation
// message plus new_key_signature (docs/PROTOCOL.md §6).
type rotateKeyRequest struct {
	OperatorID      string `json:"operator_id" doc:"The operator's ID, as registered; a rotation does not change it." example:"\"op_34750f98bd59fcfc\""`
	NewPublicKey    string `json:"new_public_key" doc:"The new Ed25519 key, PEM starting -----BEGIN PUBLIC KEY-----; signed exactly as sent."`
	RotationAt      string `json:"rotation_at" doc:"RFC 3339 UTC, within five minutes of the federation's clock; signed exactly as sent." example:"\"2026-11-21T15:00:00Z\""`
	OldKeySignature string `json:"old_key_signature" doc:"Base64 Ed25519 signature by the current key over new_public_key ‖ rotation_at."`
	NewKeySignature string `json:"new_key_signature" doc:"Base64 Ed25519 signature by the new key over the same bytes (proof of possession)."`
}

// rotateKeyResponse answers a rotation once the controller has applied and logged it.
type rotateKeyResponse struct {
	OperatorID     string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	NewPublicKey   string `json:"new_public_key" doc:"The key the operator holds now."`
	NewFingerprint string `json:"new_fingerprint" doc:"Hex SHA-256 of the new raw public key."`
	RotatedAt      string `json:"rotated_at" doc:"When the federation applied the rotation, RFC 3339 UTC." example:"\"2026-11-21T15:00:01Z\""`
	TLogLogIndex   int64  `json:"tlog_log_index" doc:"The key-rotation record's index in the federation's transparency log."`
	TLogURL        string `json:"tlog_url,omitempty" doc:"Where the log serves the record, when it names one."`
}

// serveRotateKey answers POST /federation/rotate-key.
func (s *Server) serveRotateKey(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req rotateKeyRequest
	if err := decodeJSON(r, &req); err != nil {
		s.fail(ctx, w, "read the key rotation", err)
		return
	}
	var (
		fo          *fv1.FederationOperator
		fingerprint string
	)
	err := admitAgainOnConflict(func() (err error) {
		fo, fingerprint, err = s.admitRotation(ctx, &req)
		return err
	})
	if err != nil {
		s.fail(ctx, w, "rotate an operator's key", err)
		return
	}
	rotatedTo := func(o *fv1.FederationOperator) *fv1.KeyRecord {
		for i := range o.Status.KeyHistory {
			if k := &o.Status.KeyHistory[i]; string(k.Fingerprint) == fingerprint && k.LogEntry != nil {
				return k
			}
		}
		return nil
	}
	fo, err = s.awaitVerdict(ctx, fo,
		func(o *fv1.FederationOperator) bool { return rotatedTo(o) != nil },
		[]string{fv1.ReasonKeyRotationInvalid, fv1.ReasonDuplicateKey},
		func(reason, msg string) *apiError {
			if reason == fv1.ReasonDuplicateKey {
				e := keyTaken(protocol.OperatorID(mustParse(req.NewPublicKey)))
				e.message = msg
				return e
			}
			return &apiError{status: http.StatusBadRequest, code: "rotation_rejected", message: msg, extra: map[string]any{"reason": reason}}
		},
		"rotation_pending", "the federation accepted the key rotation but has not applied and logged it yet; it may still: "+
			"GET /federation/operator/{id} shows the key history")
	if err != nil {
		s.fail(ctx, w, "wait for the key rotation", err)
		return
	}
	k := rotatedTo(fo)
	s.log.InfoContext(ctx, "Rotated an operator's key through the API", "operatorID", req.OperatorID,
		"federationOperator", fo.Name, "fingerprint", fingerprint, "logIndex", k.LogEntry.LogIndex)
	writeJSON(w, http.StatusOK, rotateKeyResponse{OperatorID: string(fo.Status.OperatorID), NewPublicKey: string(k.PublicKeyPEM),
		NewFingerprint: fingerprint, RotatedAt: k.ValidFrom.UTC().Format(time.RFC3339),
		TLogLogIndex: k.LogEntry.LogIndex, TLogURL: k.LogEntry.URL})
}

// mustParse parses a PEM key admitRotation accepted.
func mustParse(pemText string) ed25519.PublicKey {
	pub, _ := protocol.ParsePublicKeyPEM([]byte(pemText))
	return pub
}

// admitRotation checks req (fields, rotation_at, new key, operator, both signatures with
// the controller's KeyRotation.Verify and CheckRotation, the new key's holders with
// KeyHolder) and writes the rotation into the operator's spec, publicKeyPEM and
// keyRotation in one Update. It returns the operator and the new key's fingerprint.
func (s *Server) admitRotation(ctx context.Context, req *rotateKeyRequest) (*fv1.FederationOperator, string, error) {
	var names []string
	for name, v := range map[string]string{"operator_id": req.OperatorID, "new_public_key": req.NewPublicKey, "rotation_at": req.RotationAt} {
		if v == "" {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		return nil, "", &apiError{status: http.StatusBadRequest, code: "missing_fields",
			message: "missing fields: " + joinNames(names), extra: map[string]any{"fields": names}}
	}
	now := s.now()
	if err := checkStatementAt("rotation_at", req.RotationAt, now); err != nil {
		return nil, "", err
	}
	if !strings.HasPrefix(req.NewPublicKey, "-----BEGIN PUBLIC KEY-----") {
		return nil, "", &apiError{status: http.StatusBadRequest, code: "invalid_public_key",
			message: "new_public_key does not start with -----BEGIN PUBLIC KEY-----"}
	}
	newPub, err := protocol.ParsePublicKeyPEM([]byte(req.NewPublicKey))
	if err != nil {
		return nil, "", &apiError{status: http.StatusBadRequest, code: "invalid_public_key", message: "new_public_key: " + err.Error()}
	}
	fo, err := s.registeredOperator(ctx, req.OperatorID)
	if err != nil {
		return nil, "", err
	}
	if req.OldKeySignature == "" {
		return nil, "", missingSignature("old_key_signature")
	}
	if req.NewKeySignature == "" {
		return nil, "", missingSignature("new_key_signature")
	}
	current := currentPub(fo)
	if newPub.Equal(current) {
		return nil, "", &apiError{status: http.StatusBadRequest, code: "invalid_public_key", message: "new_public_key is the operator's current key"}
	}
	// The controller's check, field by field as CheckRotation builds it, to tell a bad
	// signature (401) from the rest.
	if _, err := (protocol.KeyRotation{OperatorID: protocol.OperatorID(current), NewPublicKey: req.NewPublicKey,
		RotationAt: req.RotationAt, OldKeySignature: req.OldKeySignature, NewKeySignature: req.NewKeySignature}).Verify(current, now); err != nil {
		return nil, "", signatureError(err, "rotation_at")
	}
	newID := protocol.OperatorID(newPub)
	fo.Spec.PublicKeyPEM = fv1.PublicKeyPEM(req.NewPublicKey)
	fo.Spec.KeyRotation = &fv1.KeyRotation{RotationAt: fv1.Timestamp(req.RotationAt),
		OldKeySignature: fv1.Signature(req.OldKeySignature), NewKeySignature: fv1.Signature(req.NewKeySignature)}
	if _, reason, msg := federation.CheckRotation(fo, now); reason != "" {
		e := keyTaken(newID) // the one refusal Verify leaves: this operator held the new key before
		e.message = msg
		return nil, "", e
	}
	holder, err := federation.KeyHolder(ctx, s.client, fo, newID)
	if err != nil {
		return nil, "", err
	}
	if holder != nil {
		return nil, "", keyTaken(newID)
	}
	if err := s.writeStatement(ctx, fo); err != nil {
		return nil, "", err
	}
	return fo, protocol.Fingerprint(newPub), nil
}
