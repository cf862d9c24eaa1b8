package webhook

import (
	"context"
	"net/http"
	"slices"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// withdrawRequest is the body of POST /federation/withdraw (docs/PROTOCOL.md §6).
type withdrawRequest struct {
	OperatorID string `json:"operator_id" doc:"The operator's ID, as registered." example:"\"op_34750f98bd59fcfc\""`
	At         string `json:"at" doc:"RFC 3339 UTC, within five minutes of the federation's clock; signed exactly as sent." example:"\"2026-11-21T14:00:00Z\""`
	Signature  string `json:"signature" doc:"Base64 Ed25519 signature by the operator's current key over \"withdraw <operator_id> at <at>\"."`
}

// withdrawResponse answers a withdrawal once the controller has applied and logged it.
type withdrawResponse struct {
	OperatorID   string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	Status       string `json:"status" doc:"Always withdrawn." example:"\"withdrawn\""`
	WithdrawnAt  string `json:"withdrawn_at" doc:"The withdrawal's at, as signed." example:"\"2026-11-21T14:00:00Z\""`
	TLogLogIndex int64  `json:"tlog_log_index" doc:"The withdrawal record's index in the federation's transparency log."`
	TLogURL      string `json:"tlog_url,omitempty" doc:"Where the log serves the record, when it names one."`
}

// serveWithdraw answers POST /federation/withdraw.
func (s *Server) serveWithdraw(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req withdrawRequest
	if err := decodeJSON(r, &req); err != nil {
		s.fail(ctx, w, "read the withdrawal", err)
		return
	}
	var fo *fv1.FederationOperator
	err := admitAgainOnConflict(func() (err error) {
		fo, err = s.admitWithdrawal(ctx, &req)
		return err
	})
	if err != nil {
		s.fail(ctx, w, "withdraw an operator", err)
		return
	}
	fo, err = s.awaitVerdict(ctx, fo,
		func(o *fv1.FederationOperator) bool {
			return o.Status.Phase == fv1.PhaseWithdrawn && o.Status.WithdrawalLogEntry != nil
		},
		[]string{fv1.ReasonWithdrawalInvalid},
		func(reason, msg string) *apiError {
			return &apiError{status: http.StatusBadRequest, code: "withdrawal_rejected", message: msg, extra: map[string]any{"reason": reason}}
		},
		"withdrawal_pending", "the federation accepted the withdrawal but has not applied and logged it yet; it may still: "+
			"GET /federation/operator/{id} shows it, and a new withdrawal answers operator_withdrawn once it has")
	if err != nil {
		s.fail(ctx, w, "wait for the withdrawal", err)
		return
	}
	s.log.InfoContext(ctx, "Withdrew operator through the API", "operatorID", req.OperatorID,
		"federationOperator", fo.Name, "logIndex", fo.Status.WithdrawalLogEntry.LogIndex)
	writeJSON(w, http.StatusOK, withdrawResponse{OperatorID: req.OperatorID, Status: "withdrawn",
		WithdrawnAt: string(fo.Spec.Withdrawal.At), TLogLogIndex: fo.Status.WithdrawalLogEntry.LogIndex,
		TLogURL: fo.Status.WithdrawalLogEntry.URL})
}

// admitWithdrawal checks req (fields, at, operator, signature with the controller's
// Withdrawal.VerifyAs) and writes it into the operator's spec.
func (s *Server) admitWithdrawal(ctx context.Context, req *withdrawRequest) (*fv1.FederationOperator, error) {
	var names []string
	if req.OperatorID == "" {
		names = append(names, "operator_id")
	}
	if req.At == "" {
		names = append(names, "at")
	}
	if len(names) > 0 {
		slices.Sort(names)
		return nil, &apiError{status: http.StatusBadRequest, code: "missing_fields",
			message: "missing fields: " + joinNames(names), extra: map[string]any{"fields": names}}
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
	wd := protocol.Withdrawal{OperatorID: req.OperatorID, At: req.At, Signature: req.Signature}
	if err := wd.VerifyAs(string(fo.Status.OperatorID), currentPub(fo), now); err != nil {
		return nil, signatureError(err, "at")
	}
	fo.Spec.Withdrawal = &fv1.Withdrawal{At: fv1.Timestamp(req.At), Signature: fv1.Signature(req.Signature)}
	if err := s.writeStatement(ctx, fo); err != nil {
		return nil, err
	}
	return fo, nil
}
