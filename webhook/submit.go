package webhook

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// POST /federation/submit (docs/PROTOCOL.md §3, §5): an operator sends a cairn-chain-v2
// export under its bearer token. The body is read once, as a stream: it is hashed for the
// token as it is read and verified by protocol.VerifyExport under the operator's current
// key (every entry's shape, seq, body hash and link, the header against the entries, the
// envelope signature), one entry at a time, so a 50 MB export never sits in memory. Only
// the header is kept: the API creates a Submission of it (submit_land.go) and answers
// once the Submission controller, which decides continuity, entry-count growth,
// withdrawal and the pending bound, has given its verdict.

// submitResponse is the seed's answer to an accepted export, plus fields of Cairn's own.
type submitResponse struct {
	SubmissionID       string `json:"submission_id" doc:"The Submission's name; re-sending the same export answers the same ID." example:"\"sub-34750f98bd59fcfc-1\""`
	OperatorID         string `json:"operator_id" example:"\"op_34750f98bd59fcfc\""`
	Verified           bool   `json:"verified" doc:"The envelope signature verified under the operator's current key (always true in a 200)."`
	EntryCount         int64  `json:"entry_count" doc:"The header's entry_count: entries in the chain through last_seq."`
	FirstSeq           int64  `json:"first_seq"`
	LastSeq            int64  `json:"last_seq"`
	ContinuityVerified bool   `json:"continuity_verified" doc:"The export continues the operator's previous accepted submission (always true in a 200)."`
	SubmittedAt        string `json:"submitted_at" doc:"When the federation first recorded the export, RFC 3339 UTC in whole seconds." example:"\"2026-11-24T07:00:00Z\""`
	PendingAnchor      bool   `json:"pending_anchor" doc:"True until a cross-anchor covers the submission."`
	// Cairn's additions.
	EntriesVerified      int64  `json:"entries_verified" doc:"How many entries this request carried and the federation verified; 0 for a header-only export."`
	PreviousSubmissionID string `json:"previous_submission_id,omitempty" doc:"The submission this one continues; absent for the operator's first."`
	AnchorID             string `json:"anchor_id,omitempty" doc:"The cross-anchor that covers the submission, once one does."`
}

// serveSubmit answers POST /federation/submit.
func (s *Server) serveSubmit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	auth, err := s.authenticate(ctx, r)
	if err == nil {
		err = s.maySubmit(ctx, auth.operator)
	}
	if err != nil {
		s.fail(ctx, w, "authenticate a submission", err)
		return
	}
	report, held, err := readExport(r.Body, r.Header.Get("Content-Type"), auth)
	if err != nil {
		s.fail(ctx, w, "read an export", err)
		return
	}
	sidecars, err := s.storeSidecars(held)
	if err != nil {
		s.fail(ctx, w, "store sidecars", err)
		return
	}
	sub, err := s.land(ctx, auth.operator, report, sidecars)
	if err != nil {
		s.fail(ctx, w, "record a submission", err)
		return
	}
	s.log.InfoContext(ctx, "Accepted a submission through the API", "operatorID", auth.ID(), "submission", sub.Name,
		"firstSeq", sub.Spec.FirstSeq, "lastSeq", sub.Spec.LastSeq, "entries", report.Entries, "sidecars", len(sidecars))
	writeJSON(w, http.StatusOK, submitResponse{
		SubmissionID: sub.Name, OperatorID: string(sub.Spec.OperatorID), Verified: sub.Status.Ed25519Verified,
		EntryCount: sub.Spec.EntryCount, FirstSeq: sub.Spec.FirstSeq, LastSeq: sub.Spec.LastSeq,
		ContinuityVerified: sub.Status.ContinuityVerified, SubmittedAt: sub.CreationTimestamp.UTC().Format(time.RFC3339),
		PendingAnchor: !sub.Status.Anchored, EntriesVerified: report.Entries,
		PreviousSubmissionID: sub.Status.PreviousSubmission, AnchorID: string(sub.Status.AnchorRef),
	})
}

// maySubmit refuses, before the body is read, an operator the Submission controller would
// refuse or never judge: 403 operator_withdrawn, or 403 operator_suspended with the
// reason when the Federation's suspension lists name it (the Federation decides, never
// the operator's status, which its owner may edit).
func (s *Server) maySubmit(ctx context.Context, fo *fv1.FederationOperator) error {
	id := string(fo.Status.OperatorID)
	if fo.Status.Phase == fv1.PhaseWithdrawn {
		return withdrawnError(id)
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return err
	}
	if reason, sources := fed.Suspension(fo.Status.OperatorID); len(sources) > 0 {
		return suspendedError(id, reason)
	}
	return nil
}

// withdrawnError is the 403 of a withdrawn operator's submission.
func withdrawnError(id string) *apiError {
	return &apiError{status: http.StatusForbidden, code: "operator_withdrawn",
		message: "operator " + id + " has withdrawn from the federation", extra: map[string]any{"operator_id": id}}
}

// readExport reads the body as a stream, hashing it as it goes, and verifies the export
// in it with protocol.VerifyExport under the operator's current key; the sidecars beside
// it are read by the body's form (sidecar_read.go). The token is finished
// (auth.checkBody) before any verdict about the export is given: a body the token does
// not bind gets 401 whatever it holds; only the sidecar limits are answered before it.
// Errors: 413 body_too_large (even mid-stream), 401 from the token, 400 malformed_json
// for input that is not a well-formed export, 422 export_verification_failed for one
// that does not verify, and the sidecar errors of sidecarErrors.
func readExport(body io.Reader, contentType string, auth *operatorAuth) (*protocol.ExportReport, []heldSidecar, error) {
	parse, err := parserFor(contentType, auth)
	if err != nil {
		return nil, nil, err
	}
	src := &readRecorder{r: body}
	digest := sha256.New()
	report, sidecars, verr := parse(io.TeeReader(src, digest))
	var limit limitError
	if errors.As(verr, &limit) && src.err == nil {
		return nil, nil, limit.apiError
	}
	if src.err == nil {
		// The reader stops at the first malformed byte; the token covers the whole body.
		_, _ = io.Copy(digest, src)
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(src.err, &tooBig):
		return nil, nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			message: fmt.Sprintf("the request body is over %d bytes", tooBig.Limit)}
	case src.err != nil:
		return nil, nil, &apiError{status: http.StatusBadRequest, code: "malformed_json", message: "the body could not be read to its end"}
	}
	var sum [sha256.Size]byte
	digest.Sum(sum[:0])
	if err := auth.checkBody(sum); err != nil {
		return nil, nil, err
	}
	var answer *apiError
	if errors.As(verr, &answer) {
		return nil, nil, answer
	}
	if verr != nil {
		return nil, nil, exportError(report, verr)
	}
	return report, sidecars, nil
}

// exportError maps VerifyExport's error: ErrMalformed is 400 malformed_json, anything
// else 422 export_verification_failed with the check that failed ("check") and, for an
// entry, its seq ("seq"). Nothing in it is a value that would have passed a check the
// client could not run itself: the export carries no secret to recompute with.
func exportError(report *protocol.ExportReport, err error) *apiError {
	if errors.Is(err, protocol.ErrMalformed) {
		return &apiError{status: http.StatusBadRequest, code: "malformed_json",
			message: "the body is not a well-formed cairn-chain-v2 export: " + err.Error()}
	}
	extra := map[string]any{}
	if report != nil && len(report.Checks) > 0 {
		extra["check"] = report.Checks[len(report.Checks)-1].Name
	}
	var ee *protocol.EntryError
	if errors.As(err, &ee) {
		extra["check"], extra["seq"] = protocol.CheckEntries, ee.Seq
	}
	return &apiError{status: http.StatusUnprocessableEntity, code: "export_verification_failed",
		message: "export verification failed: " + err.Error(), extra: extra}
}

// readRecorder passes reads through and remembers the first error other than io.EOF,
// so that a body over the limit is told from a malformed one wherever the reader that
// met it wrapped it.
type readRecorder struct {
	r   io.Reader
	err error
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && rr.err == nil {
		rr.err = err
	}
	return n, err
}

// submitErrors are the answers POST /federation/submit documents beyond every route's.
var submitErrors = append(append([]errorDoc{
	{http.StatusForbidden, []string{"operator_withdrawn", "operator_suspended"}, "The operator has withdrawn, or the federation suspended it; adds \"operator_id\" (and \"reason\", the suspension's, for operator_suspended)."},
	{http.StatusUnprocessableEntity, []string{"export_verification_failed"}, "The export does not verify under the operator's current key: an entry, the header against the entries, or the envelope signature; adds \"check\" (and \"seq\" for an entry), and \"reason\" when the controller refused it."},
	{http.StatusUnprocessableEntity, []string{"continuity_violation"}, "The export does not start where the operator's last accepted submission ended, or another export of this segment was accepted; adds the seed's \"expected_first_prev_hash\", \"got_first_prev_hash\", \"previous_submission_id\", \"hint\", and \"expected_first_seq\", \"got_first_seq\" (\"conflicting_submission_id\" for another export of the segment)."},
	{http.StatusUnprocessableEntity, []string{"entry_count_regression"}, "entry_count is below that of the operator's last accepted submission; adds \"expected_min_entry_count\", \"got_entry_count\", \"previous_submission_id\"."},
	{http.StatusUnprocessableEntity, []string{"submission_rejected"}, "The Submission controller refused the export for another reason; adds \"reason\", its condition reason."},
	{http.StatusTooManyRequests, []string{"pending_limit_exceeded"}, "The operator already has the Federation's maxPendingPerOperator submissions waiting for a cross-anchor; Retry-After is the anchor interval."},
	{http.StatusBadRequest, []string{"too_many_sidecars", "invalid_sidecar", "malformed_multipart"}, "More than 8 sidecars (adds \"max_sidecars\"), a sidecar whose media type does not parse or whose content_b64 is not base64 (adds \"index\"), or a multipart body without one export part or with a part of another name."},
	{http.StatusRequestEntityTooLarge, []string{"sidecar_too_large", "multipart_framing_too_large"}, "A sidecar is over 1 MiB decoded (adds \"index\", \"max_bytes\"), or the multipart boundaries and part headers are over 64 KiB; answered before the rest of the body is read."},
	{http.StatusConflict, []string{"sidecars_immutable"}, "The export was already recorded with other sidecars; adds \"submission_id\"."},
	{http.StatusServiceUnavailable, []string{"sidecars_not_configured"}, "The federation has no sidecar directory."},
	{http.StatusGatewayTimeout, []string{"submission_pending"}, "The controller gave no verdict in time; it may still, and re-sending the export answers it."},
}, tokenErrors...), bodyErrors...)

// itoa is strconv.FormatInt in base 10.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
