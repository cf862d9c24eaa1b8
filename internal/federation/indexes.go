package federation

import (
	"context"
	"fmt"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file is every field index of the manager's cache, which both halves read through:
// the controllers to find what a change touches, the API to read one page of what it
// shows without listing (or copying) the whole store. RegisterIndexes adds them all, once
// per manager, before any controller or the API is set up; the names here are the only
// ones a List may select on.

// The indexes. A value is what client.MatchingFields selects with.
const (
	// OperatorIDIndex indexes FederationOperators by status.operatorID (not Rejected ones,
	// which record the ID before the proof is checked) and Submissions by spec.operatorID.
	OperatorIDIndex = "operatorID"
	// OperatorKeyIndex indexes FederationOperators by the operator ID of every key they
	// hold or held: each key of status.keyHistory, and spec.publicKeyPEM (a key applied but
	// not yet registered, or not yet rotated to). It finds every past holder of a key
	// without listing every operator (KeyIDs).
	OperatorKeyIndex = "keys.operatorID"
	// ParticipantIndex indexes CrossAnchors by the operator IDs of their participants.
	ParticipantIndex = "spec.participants.operatorID"
	// PendingIndex indexes the pending Submissions (IsPending) by operator ID, and under
	// AllPending as well.
	PendingIndex = "pending"
	// SubmissionSeqIndex indexes Submissions by SeqKey of their operator and lastSeq: the
	// submission an anchor participant binds, and the one an accepted submission continues.
	SubmissionSeqIndex = "spec.operatorID.lastSeq"
	// SidecarIndex indexes Submissions by the digest of each sidecar they carry.
	SidecarIndex = "spec.sidecars.digest"
)

// AllPending is the PendingIndex value every pending Submission has.
const AllPending = "*"

// RegisterIndexes adds every index above to idx (a manager's GetFieldIndexer()). Call it
// once per manager, before the controllers and the API are set up: a List that selects
// on an index the cache lacks fails.
func RegisterIndexes(ctx context.Context, idx client.FieldIndexer) error {
	for _, i := range []struct {
		obj  client.Object
		name string
		keys client.IndexerFunc
	}{
		{&fv1.FederationOperator{}, OperatorIDIndex, func(o client.Object) []string {
			fo := o.(*fv1.FederationOperator)
			if fo.Status.Phase == fv1.PhaseRejected {
				return nil
			}
			return []string{string(fo.Status.OperatorID)}
		}},
		{&fv1.FederationOperator{}, OperatorKeyIndex, func(o client.Object) []string { return KeyIDs(o.(*fv1.FederationOperator)) }},
		{&fv1.Submission{}, OperatorIDIndex, func(o client.Object) []string { return []string{string(o.(*fv1.Submission).Spec.OperatorID)} }},
		{&fv1.Submission{}, PendingIndex, func(o client.Object) []string {
			s := o.(*fv1.Submission)
			if !IsPending(s) {
				return nil
			}
			return []string{string(s.Spec.OperatorID), AllPending}
		}},
		{&fv1.Submission{}, SubmissionSeqIndex, func(o client.Object) []string {
			s := o.(*fv1.Submission)
			return []string{SeqKey(s.Spec.OperatorID, s.Spec.LastSeq)}
		}},
		{&fv1.Submission{}, SidecarIndex, func(o client.Object) []string {
			scs := o.(*fv1.Submission).Spec.Sidecars
			keys := make([]string, len(scs))
			for i, sc := range scs {
				keys[i] = string(sc.Digest)
			}
			return keys
		}},
		{&fv1.CrossAnchor{}, ParticipantIndex, func(o client.Object) []string {
			if IsMerkle(o.(*fv1.CrossAnchor)) {
				return []string{MerkleIndexKey} // its participants are leaves in the history store
			}
			ps := o.(*fv1.CrossAnchor).Spec.Participants
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = string(p.OperatorID)
			}
			return ids
		}},
	} {
		if err := idx.IndexField(ctx, i.obj, i.name, i.keys); err != nil {
			return fmt.Errorf("index %T by %s: %w", i.obj, i.name, err)
		}
	}
	return nil
}

// SeqKey is the SubmissionSeqIndex value of operator's submission ending at lastSeq.
func SeqKey(operator fv1.OperatorID, lastSeq int64) string {
	return string(operator) + "/" + strconv.FormatInt(lastSeq, 10)
}
