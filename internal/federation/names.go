package federation

import (
	"strconv"
	"strings"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// SubmissionName is the name of the Submission that records operator id's export
// starting at firstSeq: sub-<id without "op_">-<firstSeq>. Every Submission has it (the
// Submission controller refuses any other), so two exports of one segment meet at the
// API server, and of two that continue one head only one can exist: the operator's
// accepted submissions form one chain without forks by construction.
func SubmissionName(id fv1.OperatorID, firstSeq int64) string {
	return "sub-" + strings.TrimPrefix(string(id), "op_") + "-" + strconv.FormatInt(firstSeq, 10)
}

// MaxParticipantsPerAnchor is how many operators one CrossAnchor binds at most. A run
// with more makes several anchors (one object stays well under etcd's 1.5 MB: about 140
// bytes a participant), so any number of operators is anchored in one run.
const MaxParticipantsPerAnchor = 5000
