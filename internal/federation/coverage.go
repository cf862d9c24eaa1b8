package federation

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// ParticipantOf returns ca's participant entry for operator, if it takes part.
// Participants are in operator ID order (Trust.Verify checks it).
func ParticipantOf(ca *fv1.CrossAnchor, operator fv1.OperatorID) (fv1.Participant, bool) {
	i, ok := slices.BinarySearchFunc(ca.Spec.Participants, operator, func(p fv1.Participant, id fv1.OperatorID) int {
		return strings.Compare(string(p.OperatorID), string(id))
	})
	if !ok {
		return fv1.Participant{}, false
	}
	return ca.Spec.Participants[i], true
}

// Covers reports whether ca's entry for s's operator reaches s.
func Covers(ca *fv1.CrossAnchor, s *fv1.Submission) bool {
	p, ok := ParticipantOf(ca, s.Spec.OperatorID)
	return ok && s.Spec.LastSeq <= p.LastSeq
}

// IsAccepted reports whether s passed every check and so waits for, or has, an anchor.
func IsAccepted(s *fv1.Submission) bool {
	return meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionContinuityVerified))
}

// MaxParticipantsPerAnchor is how many operators one CrossAnchor binds at most. A run
// with more makes several anchors (one object stays well under etcd's 1.5 MB: about 140
// bytes a participant), so any number of operators is anchored in one run.
const MaxParticipantsPerAnchor = 5000
