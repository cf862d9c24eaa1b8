package federation

import (
	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file is what a reader may say of a submission's anchoring, in one place: the
// pending index, the API's lists and its counts all ask these, so that the rule of when a
// submission counts as anchored can change here alone.

// IsPending reports whether s is accepted and not yet recorded as anchored: the
// submissions PendingIndex holds and an anchor run may bind.
func IsPending(s *fv1.Submission) bool { return IsAccepted(s) && !s.Status.Anchored }

// AnchorRefOf returns the anchor recorded as covering s, and whether one is: what the API
// shows as a submission's anchor_id (null while pending).
func AnchorRefOf(s *fv1.Submission) (fv1.AnchorID, bool) {
	if !s.Status.Anchored || s.Status.AnchorRef == "" {
		return "", false
	}
	return s.Status.AnchorRef, true
}
