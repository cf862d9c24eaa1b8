package webhook

import (
	"context"
	"errors"
	"net/http"
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
