package webhook

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// POST /federation/operator/{id}/suspend and /resume: the federation's administrators
// (the admin token, as POST /federation/anchor) suspend and resume an operator. The API
// writes its suspensions into the Federation's status.apiSuspensions, never its spec,
// which GitOps owns (spec.suspendedOperators); an operator is suspended while either
// names it, so neither undoes the other: a resume through the API removes only the API's
// suspension, and 409 suspended_by_gitops says when GitOps holds one. The
// FederationOperator controller follows the union into the operator's phase and logs a
// record at each change (controllers/suspension.go); the API answers once it has.

// maxSuspensionReason bounds a suspension's reason, as the CRD does.
const maxSuspensionReason = 512

// suspendRequest is the body of POST /federation/operator/{id}/suspend.
type suspendRequest struct {
	Reason string `json:"reason" doc:"Why, 1 to 512 characters; the operator's refused submissions quote it." example:"\"key compromise under investigation\""`
}

// suspensionResponse answers a suspension or resumption.
type suspensionResponse struct {
	OperatorID   string   `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	Phase        string   `json:"phase" doc:"Suspended or Active: the phase the federation's suspension lists now give the operator."`
	Reason       string   `json:"reason,omitempty" doc:"The suspension's reason (both sources', joined with \"; \"); absent when Active."`
	SuspendedBy  []string `json:"suspended_by" doc:"Which lists suspend the operator: gitops (spec.suspendedOperators), api (status.apiSuspensions); empty when Active."`
	TLogLogIndex *int64   `json:"tlog_log_index" doc:"The log index of the record of the operator's last suspension or resumption."`
}

// serveSuspend answers POST /federation/operator/{id}/suspend.
func (s *Server) serveSuspend(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fo, err := s.adminOperator(ctx, r)
	if err == nil {
		var req suspendRequest
		if err = decodeJSON(r, &req); err == nil {
			err = s.suspend(ctx, fo.Status.OperatorID, req.Reason)
		}
	}
	if err != nil {
		s.fail(ctx, w, "suspend an operator", err)
		return
	}
	s.answerSuspension(w, r, fo, "Suspended")
}

// serveResume answers POST /federation/operator/{id}/resume.
func (s *Server) serveResume(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	fo, err := s.adminOperator(ctx, r)
	if err == nil {
		err = s.resume(ctx, fo.Status.OperatorID)
	}
	if err != nil {
		s.fail(ctx, w, "resume an operator", err)
		return
	}
	s.answerSuspension(w, r, fo, "Resumed")
}

// adminOperator checks the admin token, then finds the operator the path names: 400
// invalid_operator_id, 404 operator_not_found, 403 operator_withdrawn.
func (s *Server) adminOperator(ctx context.Context, r *http.Request) (*fv1.FederationOperator, error) {
	if _, err := s.authenticateAdmin(ctx, r); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if !operatorIDPattern.MatchString(id) {
		return nil, &apiError{status: http.StatusBadRequest, code: "invalid_operator_id",
			message: "an operator ID is op_ and 16 lowercase hex characters"}
	}
	fo, err := s.cachedOperator(ctx, id)
	if err != nil {
		return nil, err
	}
	if fo.Status.Phase == fv1.PhaseWithdrawn {
		return nil, withdrawnError(id)
	}
	return fo, nil
}

// suspend adds id to the Federation's status.apiSuspensions, read from the API server and
// written at that resourceVersion. An operator the API suspends already keeps its first
// reason and time (the call is idempotent).
func (s *Server) suspend(ctx context.Context, id fv1.OperatorID, reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return &apiError{status: http.StatusBadRequest, code: "missing_fields", message: "reason is required",
			extra: map[string]any{"fields": []string{"reason"}}}
	case utf8.RuneCountInString(reason) > maxSuspensionReason || !utf8.ValidString(reason):
		return &apiError{status: http.StatusBadRequest, code: "invalid_field",
			message: "reason must be valid UTF-8 of at most 512 characters", extra: map[string]any{"field": "reason"}}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed fv1.Federation
		if err := s.apiReader.Get(ctx, s.federation, &fed); err != nil {
			return err
		}
		base := fed.DeepCopy()
		if slices.ContainsFunc(fed.Status.APISuspensions, func(a fv1.APISuspension) bool { return a.OperatorID == id }) {
			return nil
		}
		fed.Status.APISuspensions = append(fed.Status.APISuspensions, fv1.APISuspension{
			OperatorSuspension: fv1.OperatorSuspension{OperatorID: id, Reason: reason}, SuspendedAt: metav1.NewTime(s.now())})
		return s.patchFederationStatus(ctx, base, &fed)
	})
}

// resume removes id from the Federation's status.apiSuspensions: 409
// suspended_by_gitops when only spec.suspendedOperators names it, 409
// operator_not_suspended when neither does.
func (s *Server) resume(ctx context.Context, id fv1.OperatorID) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fed fv1.Federation
		if err := s.apiReader.Get(ctx, s.federation, &fed); err != nil {
			return err
		}
		base := fed.DeepCopy()
		i := slices.IndexFunc(fed.Status.APISuspensions, func(a fv1.APISuspension) bool { return a.OperatorID == id })
		if i < 0 {
			if _, sources := fed.Suspension(id); len(sources) > 0 {
				return &apiError{status: http.StatusConflict, code: "suspended_by_gitops",
					message: "operator " + string(id) + " is suspended by the Federation's spec.suspendedOperators, which the API does not change: remove it there",
					extra:   map[string]any{"operator_id": string(id)}}
			}
			return &apiError{status: http.StatusConflict, code: "operator_not_suspended",
				message: "operator " + string(id) + " is not suspended", extra: map[string]any{"operator_id": string(id)}}
		}
		fed.Status.APISuspensions = slices.Delete(fed.Status.APISuspensions, i, i+1)
		return s.patchFederationStatus(ctx, base, &fed)
	})
}

// answerSuspension waits until the controller has given fo the phase the Federation's
// lists now give it and logged the record of that phase (of a suspension, the record
// naming the lists that hold it now), then answers.
func (s *Server) answerSuspension(w http.ResponseWriter, r *http.Request, fo *fv1.FederationOperator, did string) {
	ctx := r.Context()
	var fed fv1.Federation
	if err := s.apiReader.Get(ctx, s.federation, &fed); err != nil {
		s.fail(ctx, w, "read the Federation", err)
		return
	}
	reason, sources := fed.Suspension(fo.Status.OperatorID)
	want := fv1.PhaseActive
	if len(sources) > 0 {
		want = fv1.PhaseSuspended
	}
	got, err := s.awaitVerdict(ctx, fo, func(o *fv1.FederationOperator) bool {
		n := len(o.Status.Suspensions)
		if want == fv1.PhaseSuspended && (n == 0 || !slices.Equal(o.Status.Suspensions[n-1].Sources, sources)) {
			return false // the record of who suspends it now is not written yet
		}
		return o.Status.Phase == want && (n == 0 || o.Status.Suspensions[n-1].LogEntry != nil)
	}, nil, nil, "suspension_pending", "the federation recorded the change but the controller has not applied and logged it yet; "+
		"it may still: GET /federation/operator/{id} shows it")
	if err != nil {
		s.fail(ctx, w, "wait for the controller", err)
		return
	}
	ans := suspensionResponse{OperatorID: string(fo.Status.OperatorID), Phase: string(want), Reason: reason, SuspendedBy: append([]string{}, sources...)}
	if n := len(got.Status.Suspensions); n > 0 {
		ans.TLogLogIndex = &got.Status.Suspensions[n-1].LogEntry.LogIndex
	}
	s.log.InfoContext(ctx, did+" operator through the API", "operatorID", fo.Status.OperatorID, "phase", want, "sources", sources)
	writeJSON(w, http.StatusOK, ans)
}

// suspendedError is the 403 of a suspended operator's submission, with the reason.
func suspendedError(id, reason string) *apiError {
	return &apiError{status: http.StatusForbidden, code: "operator_suspended",
		message: "operator " + id + " is suspended by the federation: " + reason,
		extra:   map[string]any{"operator_id": id, "reason": reason}}
}

// suspensionErrors are the answers the two routes document beyond every route's.
var suspensionErrors = append([]errorDoc{
	{http.StatusUnauthorized, []string{"missing_token", "invalid_admin_token"}, "No admin token, or not this federation's (an operator's token is not one)."},
	{http.StatusBadRequest, []string{"invalid_operator_id", "missing_fields", "invalid_field"}, "The path's ID is malformed, or (suspend) reason is missing, blank or over 512 characters."},
	{http.StatusNotFound, []string{"operator_not_found"}, "No operator with this ID is registered; adds \"operator_id\"."},
	{http.StatusForbidden, []string{"operator_withdrawn"}, "The operator has withdrawn; adds \"operator_id\"."},
	{http.StatusConflict, []string{"operator_not_suspended", "suspended_by_gitops"}, "(resume) Nothing suspends the operator, or only spec.suspendedOperators does; adds \"operator_id\"."},
	{http.StatusServiceUnavailable, []string{"federation_not_ready", "admin_token_not_configured"}, "The Federation or its admin Secret is not ready."},
	{http.StatusGatewayTimeout, []string{"suspension_pending"}, "The controller did not apply and log the change in time; it may still."},
}, bodyErrors...)

// operatorSuspension is the suspension an operator summary shows.
type operatorSuspension struct {
	Reason      string   `json:"reason" doc:"The suspension's reason (both lists', joined with \"; \")."`
	SuspendedBy []string `json:"suspended_by" doc:"gitops (spec.suspendedOperators), api (status.apiSuspensions), or both."`
}

// suspensionEntry is one logged suspension or resumption in an operator summary.
type suspensionEntry struct {
	Action       string  `json:"action" doc:"Suspend or Resume."`
	At           string  `json:"at" doc:"When the controller applied it, RFC 3339 UTC seconds, as logged."`
	Reason       string  `json:"reason,omitempty" doc:"The suspension's reason; absent for a resumption."`
	TLogLogIndex *int64  `json:"tlog_log_index" doc:"The record's index in the federation's transparency log; null until logged."`
	TLogURL      *string `json:"tlog_url" doc:"Where the log serves the record, when it names one."`
}

// summarizeSuspension fills sum's phase, suspension and records: whether an Active or
// Suspended operator is suspended is the Federation's to say, not fo's status.
func summarizeSuspension(sum *operatorSummary, fed *fv1.Federation, fo *fv1.FederationOperator) {
	sum.Suspensions = []suspensionEntry{}
	for _, rec := range fo.Status.Suspensions {
		e := suspensionEntry{Action: string(rec.Action), At: string(rec.At), Reason: rec.Reason}
		if l := rec.LogEntry; l != nil {
			index := l.LogIndex
			e.TLogLogIndex = &index
			if l.URL != "" {
				url := l.URL
				e.TLogURL = &url
			}
		}
		sum.Suspensions = append(sum.Suspensions, e)
	}
	sum.Phase = shownPhase(fed, fo)
	if reason, sources := fed.Suspension(fo.Status.OperatorID); len(sources) > 0 && sum.Phase == string(fv1.PhaseSuspended) {
		sum.Suspension = &operatorSuspension{Reason: reason, SuspendedBy: sources}
	}
}

// shownPhase is fo's phase as the API shows it: Active or Suspended as fed's suspension
// lists decide for an operator whose status says either, else its status's phase.
func shownPhase(fed *fv1.Federation, fo *fv1.FederationOperator) string {
	if fo.Status.Phase != fv1.PhaseActive && fo.Status.Phase != fv1.PhaseSuspended {
		return string(fo.Status.Phase)
	}
	if _, sources := fed.Suspension(fo.Status.OperatorID); len(sources) > 0 {
		return string(fv1.PhaseSuspended)
	}
	return string(fv1.PhaseActive)
}

// patchFederationStatus writes what the API changed in fed's status since base (its
// apiSuspensions or apiApprovals, the API's part of that status; the Federation
// controller writes the rest) as a merge patch, failing with a conflict when fed changed
// since base was read, so that two API calls never undo each other.
func (s *Server) patchFederationStatus(ctx context.Context, base, fed *fv1.Federation) error {
	return s.client.Status().Patch(ctx, fed, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}
