package webhook

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// renameRequest is the body of POST /federation/rename: an operator's signed statement of
// its organization's name and contact (docs/PROTOCOL.md §6, protocol.Rename).
type renameRequest struct {
	OperatorID string `json:"operator_id" doc:"The operator's ID, as registered." example:"\"op_34750f98bd59fcfc\""`
	OrgName    string `json:"org_name" doc:"The organization's new name, 1 to 253 characters; signed exactly as sent."`
	Contact    string `json:"contact" doc:"How to reach the organization, up to 320 characters, or empty for none; signed exactly as sent."`
	At         string `json:"at" doc:"RFC 3339 UTC, within five minutes of the federation's clock and later than the rename in force; signed exactly as sent." example:"\"2026-11-21T16:00:00Z\""`
	Signature  string `json:"signature" doc:"Base64 Ed25519 signature by the operator's current key over \"rename \" and the RFC 8785 JSON of {at, contact, operator_id, org_name}."`
}

// renameResponse answers a rename once the controller has applied and logged it.
type renameResponse struct {
	OperatorID   string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	OrgName      string `json:"org_name" doc:"The name the federation shows now."`
	Contact      string `json:"contact" doc:"The contact the federation shows now."`
	RenamedAt    string `json:"renamed_at" doc:"The rename's at, as signed." example:"\"2026-11-21T16:00:00Z\""`
	TLogLogIndex int64  `json:"tlog_log_index" doc:"The rename record's index in the federation's transparency log."`
	TLogURL      string `json:"tlog_url,omitempty" doc:"Where the log serves the record, when it names one."`
}

// renameErrors are the answers the rename route documents beyond every route's.
var renameErrors = append([]errorDoc{
	{http.StatusBadRequest, []string{"missing_fields", "invalid_time", "time_out_of_window", "invalid_field", "invalid_rename"}, "A field is missing, at is not RFC 3339 UTC or is more than five minutes from the federation's clock (adds \"field\"), org_name or contact is too long, or at is not later than the rename in force."},
	{http.StatusUnauthorized, []string{"invalid_signature"}, "signature is missing or does not verify under the operator's current key."},
	{http.StatusNotFound, []string{"operator_not_found"}, "No operator with this ID is registered; adds \"operator_id\"."},
	{http.StatusForbidden, []string{"operator_withdrawn"}, "The operator has withdrawn; adds \"operator_id\"."},
	{http.StatusConflict, []string{"conflict"}, "The operator changed, five times, while the rename was checked; send it again."},
	{http.StatusBadRequest, []string{"rename_rejected"}, "The controller refused the rename; adds \"reason\", its condition reason."},
	{http.StatusGatewayTimeout, []string{"rename_pending"}, "The controller did not apply and log the rename in time; it may still do so."},
}, bodyErrors...)

// serveRename answers POST /federation/rename.
func (s *Server) serveRename(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req renameRequest
	if err := decodeJSON(r, &req); err != nil {
		s.fail(ctx, w, "read the rename", err)
		return
	}
	var fo *fv1.FederationOperator
	err := admitAgainOnConflict(func() (err error) {
		fo, err = s.admitRename(ctx, &req)
		return err
	})
	if err != nil {
		s.fail(ctx, w, "rename an operator", err)
		return
	}
	applied := func(o *fv1.FederationOperator) *fv1.OrganizationRecord {
		for i := range o.Status.Organization {
			if rec := &o.Status.Organization[i]; string(rec.Signature) == req.Signature && string(rec.At) == req.At && rec.LogEntry != nil {
				return rec
			}
		}
		return nil
	}
	fo, err = s.awaitCondition(ctx, fo, fv1.ConditionOrganizationVerified,
		func(o *fv1.FederationOperator) bool { return applied(o) != nil },
		[]string{fv1.ReasonRenameInvalid},
		func(reason, msg string) *apiError {
			return &apiError{status: http.StatusBadRequest, code: "rename_rejected", message: msg, extra: map[string]any{"reason": reason}}
		},
		"rename_pending", "the federation accepted the rename but has not applied and logged it yet; it may still: "+
			"GET /federation/operator/{id} shows the name in force")
	if err != nil {
		s.fail(ctx, w, "wait for the rename", err)
		return
	}
	rec := applied(fo)
	org, contact, _ := federation.ShownOrganization(fo)
	s.log.InfoContext(ctx, "Renamed an operator through the API", "operatorID", req.OperatorID,
		"federationOperator", fo.Name, "logIndex", rec.LogEntry.LogIndex)
	writeJSON(w, http.StatusOK, renameResponse{OperatorID: req.OperatorID, OrgName: org, Contact: contact,
		RenamedAt: string(rec.At), TLogLogIndex: rec.LogEntry.LogIndex, TLogURL: rec.LogEntry.URL})
}

// admitRename checks req (fields, at, operator, the signature and order by the
// controller's federation.CheckRename) and writes it into the operator's spec.rename in
// one Update.
func (s *Server) admitRename(ctx context.Context, req *renameRequest) (*fv1.FederationOperator, error) {
	if err := requireFields(map[string]string{"operator_id": req.OperatorID, "org_name": req.OrgName, "at": req.At}); err != nil {
		return nil, err
	}
	now := s.now()
	if err := checkStatementAt("at", req.At, now); err != nil {
		return nil, err
	}
	fo, err := s.registeredOperator(ctx, req.OperatorID)
	if err != nil {
		return nil, err
	}
	if req.Signature == "" {
		return nil, missingSignature("signature")
	}
	fo.Spec.Rename = &fv1.Rename{OrgName: req.OrgName, Contact: req.Contact, At: fv1.Timestamp(req.At), Signature: fv1.Signature(req.Signature)}
	if err := checkRename(fo, currentPub(fo), now); err != nil {
		return nil, err
	}
	if err := s.writeStatement(ctx, fo); err != nil {
		return nil, err
	}
	return fo, nil
}

// checkRename is the controller's check of fo's spec.rename under pub
// (federation.CheckRename) as an answer: a signature that does not verify is 401
// invalid_signature, the rest 400 invalid_rename.
func checkRename(fo *fv1.FederationOperator, pub ed25519.PublicKey, now time.Time) error {
	err := federation.RenameOf(fo).VerifyAs(string(fo.Status.OperatorID), pub, now)
	switch {
	case errors.Is(err, protocol.ErrSignature):
		return &apiError{status: http.StatusUnauthorized, code: "invalid_signature", message: err.Error()}
	case err != nil:
		return &apiError{status: http.StatusBadRequest, code: "invalid_rename", message: err.Error()}
	}
	if _, _, msg := federation.CheckRename(fo, pub, now); msg != "" {
		return &apiError{status: http.StatusBadRequest, code: "invalid_rename", message: msg}
	}
	return nil
}
