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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
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
	var place *slot
	if err == nil {
		if place, err = s.inFlight.admit(auth.ID()); err != nil {
			var refusal *apiError
			if errors.As(err, &refusal) {
				err = closing(refusal)
			}
		}
	}
	if err != nil {
		s.fail(ctx, w, "authenticate a submission", err)
		return
	}
	defer place.release()
	intake := &sidecarIntake{store: s.sidecars, slot: place}
	defer intake.discard()
	report, err := readExport(r.Body, r.Header.Get("Content-Type"), auth, intake)
	if err != nil {
		s.fail(ctx, w, "read an export", err)
		return
	}
	sidecars := intake.records()
	if err := s.checkSidecarQuota(ctx, auth.operator, sidecars); err != nil {
		s.fail(ctx, w, "store sidecars", err)
		return
	}
	sub, err := s.land(ctx, auth.operator, report, sidecars)
	if err == nil {
		// Kept only now: a refused submission leaves nothing on the volume. Should this
		// fail, or the process die first, sending the same submission again keeps them.
		err = s.keepSidecars(intake)
	}
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
func readExport(body io.Reader, contentType string, auth *operatorAuth, in *sidecarIntake) (*protocol.ExportReport, error) {
	parse, err := parserFor(contentType, auth)
	if err != nil {
		return nil, err
	}
	src := &readRecorder{r: body}
	digest := sha256.New()
	report, verr := parse(io.TeeReader(src, digest), in)
	var limit limitError
	if errors.As(verr, &limit) && src.err == nil {
		return nil, closing(limit.apiError)
	}
	if src.err == nil {
		// The reader stops at the first malformed byte; the token covers the whole body.
		_, _ = io.Copy(digest, src)
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(src.err, &tooBig):
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			message: fmt.Sprintf("the request body is over %d bytes", tooBig.Limit)}
	case src.err != nil:
		return nil, &apiError{status: http.StatusBadRequest, code: "malformed_json", message: "the body could not be read to its end"}
	}
	var sum [sha256.Size]byte
	digest.Sum(sum[:0])
	if err := auth.checkBody(sum); err != nil {
		return nil, err
	}
	var answer *apiError
	if errors.As(verr, &answer) {
		return nil, answer
	}
	if verr != nil {
		return nil, exportError(report, verr)
	}
	return report, nil
}

// closing is e with Connection: close, for an answer given before the body was read to
// its end: the server then answers at once and closes, where it would otherwise read
// what is left of a short remainder first, waiting on a client that may have stalled.
func closing(e *apiError) *apiError {
	out := *e
	out.header = map[string]string{"Connection": "close"}
	for k, v := range e.header {
		out.header[k] = v
	}
	return &out
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
	{http.StatusTooManyRequests, []string{"too_many_submissions_in_flight", "sidecar_budget_exceeded"}, "The operator already has 4 submissions in flight on this server (adds \"max_in_flight\"), or its submissions in flight hold 16 MiB of sidecars (adds \"max_bytes_in_flight\"); answered at once, with Retry-After."},
	{http.StatusRequestEntityTooLarge, []string{"sidecar_quota_exceeded"}, "The sidecars would take the operator's submissions past its quota of distinct sidecar bytes (256 MiB by default); adds \"quota_bytes\", \"used_bytes\"."},
	{http.StatusServiceUnavailable, []string{"sidecars_not_configured", "server_busy"}, "The federation has no sidecar directory; or the submissions in flight on this server already hold all it allows (64 submissions, 64 MiB of sidecars by default), with Retry-After."},
	{http.StatusInsufficientStorage, []string{"sidecar_storage_full"}, "The federation's sidecar store is full; send the export without sidecars."},
	{http.StatusGatewayTimeout, []string{"submission_pending"}, "The controller gave no verdict in time; it may still, and re-sending the export answers it."},
}, tokenErrors...), bodyErrors...)

// itoa is strconv.FormatInt in base 10.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Landing a verified export: the API creates the Submission of its header under the
// segment's name (federation.SubmissionName) and waits for the Submission controller's verdict. The
// name makes racing submits of one segment meet at the API server:
//
//   - the same export (same signed header and signature) finds its own Submission and
//     answers its verdict: re-sending is idempotent;
//   - another export of the segment waits for the one there: if it was accepted the
//     segment is taken (422 continuity_violation); if it was refused it is removed and
//     the name tried again.
//
// A refused Submission is not kept as a record: whoever reads the refusal deletes it at
// its UID, so the name is free for a corrected export. That is the one delete of
// Submissions the manager makes:
//
// +kubebuilder:rbac:groups=federation.cairn.dev,resources=submissions,verbs=delete

// submitPoll is how often the API reads a Submission from the cache while it waits for
// its verdict; goneCheck how many polls pass between reads past the cache of one the
// cache does not show (created but not yet seen, or already deleted).
const (
	submitPoll = 5 * time.Millisecond
	goneCheck  = 20
)

// errGone says the Submission waited on was deleted: refused, and removed by whoever
// read the refusal first.
var errGone = errors.New("the submission was deleted")

// land records report's export for operator fo and returns its accepted Submission, or
// the refusal as an answer.
func (s *Server) land(parent context.Context, fo *fv1.FederationOperator, report *protocol.ExportReport, sidecars []fv1.SubmissionSidecar) (*fv1.Submission, error) {
	ctx, cancel := context.WithTimeout(parent, s.regTimeout)
	defer cancel()
	key := fo.Status.KeyHistory[len(fo.Status.KeyHistory)-1].PublicKeyPEM
	want := &fv1.Submission{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.federation.Namespace, Name: federation.SubmissionName(fo.Status.OperatorID, report.Header.FirstSeq)},
		Spec:       federation.SubmissionSpecFor(fo.Status.OperatorID, key, report.Envelope),
	}
	want.Spec.Sidecars = sidecars
	// The controller's own header check, before anything is written.
	if reason, _, msg := federation.VerifySubmissionHeader(&want.Spec, currentPub(fo)); reason != "" {
		return nil, &apiError{status: http.StatusUnprocessableEntity, code: "export_verification_failed",
			message: "export verification failed: " + msg, extra: map[string]any{"reason": reason}}
	}
	for {
		sub, err := s.createOrFind(ctx, want)
		if err == nil && sameExport(&sub.Spec, &want.Spec) && !equality.Semantic.DeepEqual(sub.Spec.Sidecars, want.Spec.Sidecars) {
			return nil, sidecarsImmutable(sub)
		}
		if err == nil && equality.Semantic.DeepEqual(sub.Spec, want.Spec) {
			sub, err = s.awaitSubmission(ctx, sub)
			if err == nil {
				return sub, nil
			}
		} else if err == nil { // another export of this segment
			if sub, err = s.awaitSubmission(ctx, sub); err == nil {
				return nil, s.segmentTaken(ctx, want, sub)
			}
			var ae *apiError
			if errors.As(err, &ae) { // refused, and now removed: try the name again
				err = errGone
			}
		}
		if !errors.Is(err, errGone) {
			return nil, timedOut(ctx, parent, err)
		}
		if err := sleep(ctx, submitPoll); err != nil {
			return nil, timedOut(ctx, parent, err)
		}
	}
}

// createOrFind creates want, or returns the Submission already under its name (read past
// the cache); errGone when that one went between the two.
func (s *Server) createOrFind(ctx context.Context, want *fv1.Submission) (*fv1.Submission, error) {
	sub := want.DeepCopy()
	err := s.client.Create(ctx, sub)
	switch {
	case err == nil:
		return sub, nil
	case apierrors.IsInvalid(err):
		return nil, &apiError{status: http.StatusBadRequest, code: "invalid_field", message: err.Error()}
	case !apierrors.IsAlreadyExists(err):
		return nil, err
	}
	var there fv1.Submission
	switch err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(want), &there); {
	case apierrors.IsNotFound(err):
		return nil, errGone
	case err != nil:
		return nil, err
	}
	return &there, nil
}

// awaitSubmission reads sub (at its UID) from the cache until the controller's verdict
// is final: the accepted Submission, or its refusal as an answer once the refused
// Submission is deleted; errGone when it was deleted before its verdict was read here.
func (s *Server) awaitSubmission(ctx context.Context, sub *fv1.Submission) (*fv1.Submission, error) {
	key, uid := client.ObjectKeyFromObject(sub), sub.UID
	t := time.NewTicker(submitPoll)
	defer t.Stop()
	for polls := 0; ; polls++ {
		var got fv1.Submission
		err := s.client.Get(ctx, key, &got, client.UnsafeDisableDeepCopy)
		switch {
		case err == nil && got.UID == uid:
			if v := federation.VerdictOf(&got); v.Done {
				if v.Accepted {
					return got.DeepCopy(), nil
				}
				return nil, s.refused(ctx, got.DeepCopy(), v)
			}
		case err == nil || apierrors.IsNotFound(err):
			// The cache has not seen it yet, or it is gone: ask the API server now and then.
			if polls%goneCheck == goneCheck-1 {
				if gone, err := s.deleted(ctx, key, uid); err != nil || gone {
					return nil, errors.Join(err, errGone)
				}
			}
		default:
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// deleted reports whether the Submission key of uid no longer exists at the API server.
func (s *Server) deleted(ctx context.Context, key client.ObjectKey, uid types.UID) (bool, error) {
	var there metav1.PartialObjectMetadata
	there.SetGroupVersionKind(fv1.GroupVersion.WithKind("Submission"))
	switch err := s.apiReader.Get(ctx, key, &there); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return there.UID != uid, nil
}

// refused deletes sub, which the controller refused, at its UID (a refused export is not
// a record) and returns the refusal's answer.
func (s *Server) refused(ctx context.Context, sub *fv1.Submission, v federation.SubmissionVerdict) error {
	uid := sub.UID
	err := s.client.Delete(ctx, sub, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return s.refusal(ctx, sub, v)
}

// timedOut turns an error met once the wait's own deadline (ctx's) has passed into its
// answer, 504 submission_pending, whatever the call that met it made of the deadline (a
// client's rate limiter, for one, says it would exceed it); the client's leaving (parent's
// end) stays an error of its own, and a verdict stays the verdict.
func timedOut(ctx, parent context.Context, err error) error {
	var answer *apiError
	if errors.As(err, &answer) { // a verdict, given in time or not
		return err
	}
	if parent.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil) {
		return &apiError{status: http.StatusGatewayTimeout, code: "submission_pending",
			message: "the federation recorded the export but the controller has not judged it yet; it may still: send the same export again for its verdict"}
	}
	return err
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
