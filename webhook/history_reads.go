package webhook

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/history"
)

// This file reads the records that moved from etcd to the history store (internal/history,
// controllers/history.go) as if they were still objects: every read of an anchor or a
// submission looks in the manager's cache first, then in the store, so the operator
// summary, the receipts, /anchor/{id}, /verify/{id} and the public page answer for a
// year-old record as they did on its first day. The store checks each row it gives (its
// seal and its record's proofs); a row that fails is logged and answered as missing.

// anchorNamed returns fed's CrossAnchor id from the cache (uncopied: the caller must not
// write to it), else from the history store; nil when neither has it.
func (s *Server) anchorNamed(ctx context.Context, fed *fv1.Federation, id string) (*fv1.CrossAnchor, error) {
	var ca fv1.CrossAnchor
	err := s.client.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: id}, &ca, client.UnsafeDisableDeepCopy)
	if err == nil {
		return &ca, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if s.history == nil {
		return nil, nil
	}
	stored, err := s.history.Anchor(ctx, fed, id)
	if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrTampered) {
		return nil, nil // a tampered row is logged by the store's OnTampered
	}
	return stored, err
}

// submissionNamed returns the Submission name of fed's namespace from the cache
// (uncopied), else from the history store; nil when neither has it.
func (s *Server) submissionNamed(ctx context.Context, namespace, name string) (*fv1.Submission, error) {
	var sub fv1.Submission
	err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sub, client.UnsafeDisableDeepCopy)
	if err == nil {
		return &sub, nil
	}
	if !apierrors.IsNotFound(err) || s.history == nil {
		return nil, client.IgnoreNotFound(err)
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := s.history.Submission(ctx, fed, name)
	if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrTampered) {
		return nil, nil
	}
	return stored, err
}

// storedEnding returns operator's stored submissions ending at lastSeq; none without a
// history store.
func (s *Server) storedEnding(ctx context.Context, operator fv1.OperatorID, lastSeq int64) ([]fv1.Submission, error) {
	if s.history == nil {
		return nil, nil
	}
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := s.history.SubmissionsEnding(ctx, fed, operator, lastSeq)
	if err != nil {
		return nil, err
	}
	out := make([]fv1.Submission, len(stored))
	for i, sub := range stored {
		out[i] = *sub
	}
	return out, nil
}

// storedSidecar reports whether a stored submission names the sidecar digest.
func (s *Server) storedSidecar(ctx context.Context, digest string) (bool, error) {
	fed, err := s.loadFederation(ctx)
	if err != nil {
		return false, err
	}
	return s.history.NamesSidecar(ctx, fed, fv1.Hash(digest))
}

// withStoredAnchors adds to live (anchors of the cache that sort after after) the
// stored anchors after after, limit of them at most (those binding operator, or all when
// operator is ""), and returns them all newest first, each once. The caller pages
// through the result, limit at a time, so limit stored ones are all a page can need.
func (s *Server) withStoredAnchors(ctx context.Context, fed *fv1.Federation, live []*fv1.CrossAnchor, operator fv1.OperatorID,
	after *pageKey, limit int,
) ([]*fv1.CrossAnchor, error) {
	all := live
	if s.history != nil {
		before := ""
		if after != nil {
			before = after.Name
		}
		var (
			stored []*fv1.CrossAnchor
			err    error
		)
		if operator == "" {
			stored, err = s.history.Anchors(ctx, fed, before, limit)
		} else if stored, err = s.history.AnchorsBinding(ctx, fed, operator, before, limit); err == nil {
			stored, err = s.withLeafOf(ctx, fed, stored, operator)
		}
		if err != nil {
			return nil, err
		}
		for _, ca := range stored {
			if after.older(ca.Spec.AnchoredAt, ca.Name) {
				all = append(all, ca)
			}
		}
	}
	slices.SortFunc(all, func(a, b *fv1.CrossAnchor) int { // newest first; anchoredAt's fixed width orders as text
		return cmp.Or(strings.Compare(b.Spec.AnchoredAt, a.Spec.AnchoredAt), strings.Compare(b.Name, a.Name))
	})
	// An anchor being moved is in both for a moment: keep one.
	return slices.CompactFunc(all, func(a, b *fv1.CrossAnchor) bool { return a.Name == b.Name }), nil
}
