package webhook

import (
	"context"
	"net/http"
	"slices"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// POST /federation/operator/{id}/approve: under spec.registration: approval a new
// operator waits, Pending, for the federation's administrators (controllers/
// operator_approval.go). With the admin token (as POST /federation/anchor) the API
// records the approval in the Federation's status.apiApprovals, never its spec, which
// GitOps owns (spec.approvedOperators); the operator is approved while either names it.
// The API answers once the controller has registered the operator and logged its
// registration record. An entry is needed only until then: each approval drops the
// entries whose operator is no longer Pending, so the list holds the approvals the
// controller has not applied yet, at most maxAPIApprovals.

const (
	// maxApprovalNote bounds an approval's note, as the CRD does.
	maxApprovalNote = 256
	// maxAPIApprovals is the CRD's bound of status.apiApprovals.
	maxAPIApprovals = 256
)

// approveRequest is the optional body of POST /federation/operator/{id}/approve.
type approveRequest struct {
	Note string `json:"note,omitempty" doc:"Why or on whose word, up to 256 characters, for the administrators; not logged." example:"\"contract 2026-114\""`
}

// serveApprove answers POST /federation/operator/{id}/approve.
func (s *Server) serveApprove(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req approveRequest
	var fo *fv1.FederationOperator
	_, err := s.authenticateAdmin(ctx, r)
	if err == nil && r.ContentLength != 0 { // no body, or {"note"}
		err = decodeJSON(r, &req)
	}
	if err == nil {
		fo, err = s.pendingOperatorAt(ctx, r.PathValue("id"))
	}
	if err == nil {
		err = s.approve(ctx, fo.Status.OperatorID, req.Note)
	}
	if err != nil {
		s.fail(ctx, w, "approve an operator", err)
		return
	}
	got, err := s.awaitVerdict(ctx, fo, func(o *fv1.FederationOperator) bool {
		return federation.Registered(o) && o.Status.RegistrationLogEntry != nil && o.Status.RegisteredAt != nil
	}, nil, nil, "approval_pending", "the federation recorded the approval but the controller has not registered and logged the operator yet; "+
		"it may still: GET /federation/operator/{id} shows it once it has")
	if err != nil {
		s.fail(ctx, w, "wait for the controller", err)
		return
	}
	s.log.InfoContext(ctx, "Approved operator through the API", "operatorID", got.Status.OperatorID,
		"logIndex", got.Status.RegistrationLogEntry.LogIndex, "approvedBy", got.Status.ApprovedBy)
	writeJSON(w, http.StatusOK, registration(got))
}

// pendingOperatorAt finds the Pending operator whose ID the path gives: 400
// invalid_operator_id, 409 operator_not_pending when it is registered already, 404
// operator_not_found when no operator has the ID.
func (s *Server) pendingOperatorAt(ctx context.Context, id string) (*fv1.FederationOperator, error) {
	if !operatorIDPattern.MatchString(id) {
		return nil, &apiError{status: http.StatusBadRequest, code: "invalid_operator_id",
			message: "an operator ID is op_ and 16 lowercase hex characters"}
	}
	fo, err := s.pendingOperator(ctx, id)
	if err != nil || fo != nil {
		return fo, err
	}
	switch registered, err := federation.RegisteredOperator(ctx, s.client, s.federation.Namespace, id); {
	case err != nil:
		return nil, err
	case registered != nil:
		return nil, &apiError{status: http.StatusConflict, code: "operator_not_pending",
			message: "operator " + id + " is registered already (" + string(registered.Status.Phase) + "): an approval changes nothing",
			extra:   map[string]any{"operator_id": id}}
	}
	return nil, operatorNotFound(id)
}

// pendingOperator returns, from the cache, the Pending operator in the served
// Federation's namespace whose status.operatorID is id; nil when there is none.
func (s *Server) pendingOperator(ctx context.Context, id string) (*fv1.FederationOperator, error) {
	var same fv1.FederationOperatorList
	if err := s.client.List(ctx, &same, client.InNamespace(s.federation.Namespace), client.MatchingFields{federation.OperatorIDIndex: id}); err != nil {
		return nil, err
	}
	for i := range same.Items {
		if o := &same.Items[i]; string(o.Status.OperatorID) == id && o.Status.Phase == fv1.PhasePending {
			return o, nil
		}
	}
	return nil, nil
}

// approve adds id to the Federation's status.apiApprovals, read from the API server and
// written at that resourceVersion, dropping the entries whose operator is no longer
// Pending. An operator the API approves already keeps its first entry (idempotent).
func (s *Server) approve(ctx context.Context, id fv1.OperatorID, note string) error {
	if utf8.RuneCountInString(note) > maxApprovalNote || !utf8.ValidString(note) {
		return &apiError{status: http.StatusBadRequest, code: "invalid_field",
			message: "note must be valid UTF-8 of at most 256 characters", extra: map[string]any{"field": "note"}}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed fv1.Federation
		if err := s.apiReader.Get(ctx, s.federation, &fed); err != nil {
			return err
		}
		base := fed.DeepCopy()
		if slices.ContainsFunc(fed.Status.APIApprovals, func(a fv1.APIApproval) bool { return a.OperatorID == id }) {
			return nil
		}
		kept := fed.Status.APIApprovals[:0]
		for _, a := range fed.Status.APIApprovals {
			o, err := s.pendingOperator(ctx, string(a.OperatorID))
			if err != nil {
				return err
			}
			if o != nil {
				kept = append(kept, a)
			}
		}
		if len(kept) >= maxAPIApprovals {
			return &apiError{status: http.StatusServiceUnavailable, code: "approval_backlog",
				message: "256 approvals wait for the controller to register their operators; retry once it has"}
		}
		kept = append(kept, fv1.APIApproval{OperatorApproval: fv1.OperatorApproval{OperatorID: id, Note: note},
			ApprovedAt: metav1.NewTime(s.now())})
		fed.Status.APIApprovals = kept
		return s.patchFederationStatus(ctx, base, &fed)
	})
}

// checkPendingRoom refuses a registration, under registration: approval, while
// MaxPendingRegistrations operators wait for approval: 503
// too_many_pending_registrations. Under open registration it checks nothing.
func (s *Server) checkPendingRoom(ctx context.Context) error {
	if s.maxPending < 0 {
		return nil
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return err
	}
	if !fed.RequiresApproval() {
		return nil
	}
	var ops fv1.FederationOperatorList
	if err := s.client.List(ctx, &ops, client.InNamespace(s.federation.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	pending := 0
	for i := range ops.Items {
		if ops.Items[i].Status.Phase == fv1.PhasePending {
			pending++
		}
	}
	if pending >= s.maxPending {
		return &apiError{status: http.StatusServiceUnavailable, code: "too_many_pending_registrations",
			message: "the federation has as many registrations awaiting its administrators' approval as it holds; try again later"}
	}
	return nil
}

// pendingTokenError is, for a token naming no registered operator, 403
// operator_pending_approval when the operator awaits approval and the token verifies
// under its key (so only the key's holder learns it); nil otherwise.
func (s *Server) pendingTokenError(ctx context.Context, tok *protocol.Token) error {
	fo, err := s.pendingOperator(ctx, tok.OperatorID)
	if err != nil || fo == nil {
		return err
	}
	pub := federation.MustKey(fo.Spec.PublicKeyPEM)
	if ownKey := pub != nil && tok.VerifyAs(pub) == nil; !ownKey {
		return nil // another key's token learns nothing: the caller answers unknown_operator
	}
	return &apiError{status: http.StatusForbidden, code: "operator_pending_approval",
		message: "operator " + tok.OperatorID + " awaits the federation's approval; its submissions are refused until an administrator approves it",
		extra:   map[string]any{"operator_id": tok.OperatorID}}
}

// approvalErrors are the answers the approve route documents beyond every route's.
var approvalErrors = append([]errorDoc{
	{http.StatusUnauthorized, []string{"missing_token", "invalid_admin_token"}, "No admin token, or not this federation's (an operator's token is not one)."},
	{http.StatusBadRequest, []string{"invalid_operator_id", "invalid_field"}, "The path's ID is malformed, or note is over 256 characters."},
	{http.StatusNotFound, []string{"operator_not_found"}, "No operator with this ID is Pending or registered; adds \"operator_id\"."},
	{http.StatusConflict, []string{"operator_not_pending"}, "The operator is registered already: an approval changes nothing; adds \"operator_id\"."},
	{http.StatusServiceUnavailable, []string{"federation_not_ready", "admin_token_not_configured", "approval_backlog"}, "The Federation or its admin Secret is not ready, or 256 approvals wait for the controller."},
	{http.StatusGatewayTimeout, []string{"approval_pending"}, "The controller did not register and log the operator in time; it may still."},
}, bodyErrors...)
