package webhook

import (
	"cmp"
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// The two lists of GET /federation/operator/{id}, each one page read through an index and
// never copied out of the cache (client.UnsafeDisableDeepCopy: nothing here writes to
// them). Submissions: the operator's accepted chain walked back from its head, one
// federation.SubmissionSeqIndex lookup a step (the accepted submission ending at the seq
// before the later one's first), so a page costs its length whatever the operator's
// history. Anchors: those that bind the operator (federation.ParticipantIndex), keys
// sorted, and only the page's verified, their verdicts remembered (s.verdicts).

// operatorSubmissions returns one page of fo's accepted submissions, newest first: limit
// of them from its head, or from the one before the submission after names; the key of
// the page's last (after when the page is empty); and whether the list ended.
func (s *Server) operatorSubmissions(ctx context.Context, fo *fv1.FederationOperator, limit int, after *pageKey,
) (items []operatorSubmission, next *pageKey, done bool, err error) {
	items, next = []operatorSubmission{}, after
	var sub *fv1.Submission
	if after == nil {
		sub, err = s.headSubmission(ctx, fo)
	} else {
		sub, err = s.submissionBefore(ctx, fo, after.Name)
	}
	for err == nil && sub != nil && len(items) < limit {
		items = append(items, summarizeSubmission(sub))
		next = &pageKey{At: sub.CreationTimestamp.UTC().Format("20060102150405"), Name: sub.Name}
		sub, err = s.acceptedEnding(ctx, fo, sub.Spec.FirstSeq-1)
	}
	return items, next, sub == nil, err
}

// summarizeSubmission is sub's item of the summary.
func summarizeSubmission(sub *fv1.Submission) operatorSubmission {
	item := operatorSubmission{SubmissionID: cmp.Or(sub.Status.SubmissionID, sub.Name), EntryCount: sub.Spec.EntryCount,
		FirstSeq: sub.Spec.FirstSeq, LastSeq: sub.Spec.LastSeq, ChainSignature: string(sub.Spec.ChainSignature),
		SubmittedAt: sub.CreationTimestamp.UTC().Format(time.RFC3339), Sidecars: sidecarItems(sub.Name, sub.Spec.Sidecars)}
	if ref, ok := federation.AnchorRefOf(sub); ok {
		id := string(ref)
		item.AnchorID = &id
	}
	return item
}

// lastSubmissionAt is when fo's newest accepted submission was created, RFC 3339 UTC
// seconds; nil before the first.
func (s *Server) lastSubmissionAt(ctx context.Context, fo *fv1.FederationOperator) (*string, error) {
	sub, err := s.headSubmission(ctx, fo)
	if err != nil || sub == nil {
		return nil, err
	}
	at := sub.CreationTimestamp.UTC().Format(time.RFC3339)
	return &at, nil
}

// headSubmission is fo's newest accepted submission (federation.Head, from the cache);
// nil when there is none.
func (s *Server) headSubmission(ctx context.Context, fo *fv1.FederationOperator) (*fv1.Submission, error) {
	head, err := federation.Head(ctx, s.client, fo)
	if err != nil || head == nil {
		return nil, err
	}
	return s.acceptedEnding(ctx, fo, head.LastSeq)
}

// submissionBefore is the accepted submission of fo that the submission name continues;
// nil when there is none, or name is not fo's.
func (s *Server) submissionBefore(ctx context.Context, fo *fv1.FederationOperator, name string) (*fv1.Submission, error) {
	sub, err := s.submissionNamed(ctx, fo.Namespace, name)
	if err != nil || sub == nil || sub.Spec.OperatorID != fo.Status.OperatorID {
		return nil, err
	}
	return s.acceptedEnding(ctx, fo, sub.Spec.FirstSeq-1)
}

// acceptedEnding is fo's accepted submission ending at lastSeq; nil when there is none
// (lastSeq 0: before the first).
func (s *Server) acceptedEnding(ctx context.Context, fo *fv1.FederationOperator, lastSeq int64) (*fv1.Submission, error) {
	if lastSeq < 1 {
		return nil, nil
	}
	subs, err := s.endingAt(ctx, fo, lastSeq)
	if err != nil {
		return nil, err
	}
	return acceptedOf(subs, fo.Status.OperatorID), nil
}

// endingAt lists fo's submissions ending at lastSeq, accepted or not, from the cache's
// index, uncopied; from the history store when the cache has none.
func (s *Server) endingAt(ctx context.Context, fo *fv1.FederationOperator, lastSeq int64) ([]fv1.Submission, error) {
	var list fv1.SubmissionList
	err := s.client.List(ctx, &list, client.InNamespace(fo.Namespace),
		client.MatchingFields{federation.SubmissionSeqIndex: federation.SeqKey(fo.Status.OperatorID, lastSeq)}, client.UnsafeDisableDeepCopy)
	if err != nil || len(list.Items) > 0 {
		return list.Items, err
	}
	return s.storedEnding(ctx, fo.Status.OperatorID, lastSeq)
}

// acceptedOf is the submission of subs that is operator's and whose signature and
// continuity the controller verified (by name, should there be more than one); nil when
// none is.
func acceptedOf(subs []fv1.Submission, operator fv1.OperatorID) *fv1.Submission {
	var found *fv1.Submission
	for i := range subs {
		sub := &subs[i]
		if sub.Spec.OperatorID == operator && sub.Status.Ed25519Verified && sub.Status.ContinuityVerified &&
			(found == nil || sub.Name < found.Name) {
			found = sub
		}
	}
	return found
}

// operatorAnchors returns one page of the anchors the federation made that bind
// operator, newest first (anchoredAt, then name), those sorting after after; the key of
// the page's last (after when the page is empty); and whether the list ended.
func (s *Server) operatorAnchors(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, limit int, after *pageKey,
) (items []operatorAnchor, next *pageKey, done bool, err error) {
	bound, err := s.anchorsBinding(ctx, fed, operator, after, limit+1)
	if err != nil {
		return nil, nil, false, err
	}
	items, next = []operatorAnchor{}, after
	for _, ca := range bound {
		if s.verdicts.TrustAnchor(fed, ca) != nil {
			continue // not the federation's: never listed
		}
		if len(items) == limit {
			return items, next, false, nil
		}
		p, _, err := s.merkle.ParticipantIn(ctx, fed, ca, operator)
		if err != nil {
			return nil, nil, false, err
		}
		a := operatorAnchor{AnchorID: string(ca.Spec.AnchorID), AnchoredAt: ca.Spec.AnchoredAt,
			CrossAnchorHash: string(ca.Spec.CrossAnchorHash), ChainSignature: string(p.ChainSignature), Participants: federation.ParticipantCount(ca)}
		if s.logLegVerified(ctx, fed, ca) {
			index := ca.Status.LogEntry.LogIndex
			a.TLogLogIndex = &index
		}
		items = append(items, a)
		next = &pageKey{At: ca.Spec.AnchoredAt, Name: ca.Name}
	}
	return items, next, true, nil
}

// anchorsBinding lists the CrossAnchors that name operator as a participant and sort
// after after, newest first, from the cache's index (uncopied and unverified) and, limit
// of them at most, from the history store (withStoredAnchors).
func (s *Server) anchorsBinding(ctx context.Context, fed *fv1.Federation, operator fv1.OperatorID, after *pageKey, limit int) ([]*fv1.CrossAnchor, error) {
	var bound []*fv1.CrossAnchor
	for _, key := range []string{string(operator), federation.MerkleIndexKey} {
		var list fv1.CrossAnchorList
		if err := s.client.List(ctx, &list, client.InNamespace(fed.Namespace),
			client.MatchingFields{federation.ParticipantIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if ca := &list.Items[i]; after.older(ca.Spec.AnchoredAt, ca.Name) {
				bound = append(bound, ca)
			}
		}
	}
	bound, err := s.withLeafOf(ctx, fed, bound, operator)
	if err != nil {
		return nil, err
	}
	return s.withStoredAnchors(ctx, fed, bound, operator, after, limit)
}

// withLeafOf keeps of anchors the seed-form ones and the Merkle-form ones the federation
// made whose checked tree holds operator's leaf.
func (s *Server) withLeafOf(ctx context.Context, fed *fv1.Federation, anchors []*fv1.CrossAnchor, operator fv1.OperatorID) ([]*fv1.CrossAnchor, error) {
	kept := anchors[:0]
	for _, ca := range anchors {
		if federation.IsMerkle(ca) {
			if s.verdicts.TrustAnchor(fed, ca) != nil {
				continue
			}
			if _, ok, err := s.merkle.ParticipantIn(ctx, fed, ca, operator); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
		}
		kept = append(kept, ca)
	}
	return kept, nil
}
