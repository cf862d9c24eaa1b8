package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the anchor run: pick the pending submissions, sign a cross-anchor over the
// latest of each operator, create its CrossAnchor, then mark the submissions it covers.
// Every step can be repeated after a crash: finishAnchors completes the marking of any
// CrossAnchor newer than status.lastAnchor before a new run starts.

// markParallelism is how many submissions are marked anchored at once.
const markParallelism = 16

// errNotEnoughParticipants means fewer operators have pending submissions than the
// Federation's minParticipants.
var errNotEnoughParticipants = errors.New("not enough participants")

// pendingSubmissions returns the accepted, unanchored submissions in fed's namespace, as
// from reads them (the cache for counting, the API server for an anchor run).
func pendingSubmissions(ctx context.Context, from client.Reader, fed *fv1.Federation) ([]fv1.Submission, error) {
	var all fv1.SubmissionList
	if err := from.List(ctx, &all, client.InNamespace(fed.Namespace)); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all.Items, func(s fv1.Submission) bool { return !isPending(&s) }), nil
}

func isPending(s *fv1.Submission) bool {
	return !s.Status.Anchored && meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionContinuityVerified))
}

// anchor makes one cross-anchor over pending and marks what it covers. It returns
// errNotEnoughParticipants, and makes nothing, when too few operators take part.
func (r *FederationReconciler) anchor(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, pending []fv1.Submission) (*fv1.CrossAnchor, error) {
	ca, err := r.createAnchor(ctx, fed, key, pending)
	if err != nil {
		return nil, err
	}
	failpoint(FailAfterAnchorCreated)
	return ca, r.markCovered(ctx, fed, ca, pending)
}

// createAnchor signs a cross-anchor over the latest pending submission of each operator
// and creates its CrossAnchor: the first step of a run.
func (r *FederationReconciler) createAnchor(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, pending []fv1.Submission) (*fv1.CrossAnchor, error) {
	latest := map[fv1.OperatorID]*fv1.Submission{}
	for i := range pending {
		s := &pending[i]
		if cur, ok := latest[s.Spec.OperatorID]; !ok || s.Spec.LastSeq > cur.Spec.LastSeq {
			latest[s.Spec.OperatorID] = s
		}
	}
	if len(latest) < int(max(fed.Spec.MinParticipants, 1)) {
		return nil, fmt.Errorf("%w: %d operators have pending submissions, minParticipants is %d",
			errNotEnoughParticipants, len(latest), fed.Spec.MinParticipants)
	}
	now := r.now().UTC()
	receipt := protocol.Receipt{AnchoredAt: protocol.FormatAnchoredAt(now)}
	for id, s := range latest {
		receipt.ParticipatingOperators = append(receipt.ParticipatingOperators,
			protocol.Participant{OperatorID: string(id), ChainSignature: string(s.Spec.ChainSignature)})
	}
	protocol.SortParticipants(receipt.ParticipatingOperators)
	var err error
	if receipt.CrossAnchorHash, err = protocol.CrossAnchorHash(receipt.ParticipatingOperators, receipt.AnchoredAt); err != nil {
		return nil, err
	}
	if receipt.AnchorID, err = r.nextAnchorID(ctx, fed.Namespace, now); err != nil {
		return nil, err
	}
	if _, err := protocol.SignReceipt(&receipt, key); err != nil {
		return nil, err
	}
	ca := &fv1.CrossAnchor{
		ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: receipt.AnchorID, Labels: map[string]string{federationLabel: fed.Name}},
		Spec: fv1.CrossAnchorSpec{
			AnchorID:               fv1.AnchorID(receipt.AnchorID),
			AnchoredAt:             receipt.AnchoredAt,
			CrossAnchorHash:        fv1.Hash(receipt.CrossAnchorHash),
			FederationSignature:    fv1.Signature(receipt.FederationSignature),
			FederationPublicKeyPEM: fv1.PublicKeyPEM(receipt.FederationPublicKeyPEM),
		},
	}
	for _, p := range receipt.ParticipatingOperators {
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: fv1.OperatorID(p.OperatorID), ChainSignature: fv1.Hash(p.ChainSignature)})
	}
	if err := r.Create(ctx, ca); err != nil {
		return nil, fmt.Errorf("create CrossAnchor %s: %w", ca.Name, err)
	}
	return ca, nil
}

// nextAnchorID returns anchor-YYYYMMDD-NNN for the day of now: one more than the day's
// highest sequence in the namespace.
func (r *FederationReconciler) nextAnchorID(ctx context.Context, namespace string, now time.Time) (string, error) {
	var anchors fv1.CrossAnchorList
	if err := r.APIReader.List(ctx, &anchors, client.InNamespace(namespace)); err != nil {
		return "", err
	}
	prefix := "anchor-" + now.Format("20060102") + "-"
	next := 1
	for _, a := range anchors.Items {
		if n, err := strconv.Atoi(strings.TrimPrefix(a.Name, prefix)); err == nil && strings.HasPrefix(a.Name, prefix) {
			next = max(next, n+1)
		}
	}
	if next > 999 {
		return "", fmt.Errorf("%s999 exists: no more anchors today", prefix)
	}
	return fmt.Sprintf("%s%03d", prefix, next), nil
}

// markCovered marks the submissions ca covers as anchored by it: for each participant, its
// operator's pending submissions up to the one whose chain_signature ca holds. subs are
// the namespace's submissions as read from the API server (the pending ones suffice).
// Marked submissions are skipped, so a repeat marks nothing twice and no submission is
// in two anchors. Then ca becomes fed's last anchor.
func (r *FederationReconciler) markCovered(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, subs []fv1.Submission) error {
	covers := make(map[fv1.OperatorID]fv1.Hash, len(ca.Spec.Participants))
	for _, p := range ca.Spec.Participants {
		covers[p.OperatorID] = p.ChainSignature
	}
	upTo := map[fv1.OperatorID]int64{}
	for _, s := range subs {
		if cs, ok := covers[s.Spec.OperatorID]; ok && s.Spec.ChainSignature == cs {
			upTo[s.Spec.OperatorID] = s.Spec.LastSeq
		}
	}
	// One status write per submission, markParallelism at a time: 10,000 one after
	// another took most of a run.
	var toMark []*fv1.Submission
	for i := range subs {
		s := &subs[i]
		last, ok := upTo[s.Spec.OperatorID]
		if !ok || !isPending(s) || s.Spec.LastSeq > last {
			continue
		}
		toMark = append(toMark, s)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(markParallelism)
	half := -1
	if os.Getenv(FailpointEnv) == FailAfterHalfMarked {
		g.SetLimit(1)
		half = len(toMark) / 2
	}
	for n, s := range toMark {
		if n == half && n > 0 {
			_ = g.Wait()
			failpoint(FailAfterHalfMarked) // exits
		}
		g.Go(func() error {
			// A merge patch of the status alone, with the resourceVersion so that a
			// submission changed meanwhile fails rather than being overwritten.
			base := s.DeepCopy()
			s.Status.Anchored, s.Status.AnchorRef = true, ca.Spec.AnchorID
			setSubmissionCondition(s, fv1.ConditionAnchored, metav1.ConditionTrue, fv1.ReasonAnchored, "bound into "+ca.Name)
			patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
			if err := r.Status().Patch(gctx, s, patch); err != nil {
				return fmt.Errorf("mark submission %s anchored: %w", s.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	at, _ := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
	fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: ca.Spec.AnchorID, AnchoredAt: metav1.NewTime(at), CrossAnchorHash: ca.Spec.CrossAnchorHash}
	return nil
}

// finishAnchors completes, in order, the marking of every CrossAnchor of fed newer than
// its last anchor: a run that stopped after creating one. It lists the anchors from
// from: the cache on every reconcile, the API server right before a run.
func (r *FederationReconciler) finishAnchors(ctx context.Context, from client.Reader, fed *fv1.Federation) error {
	var anchors fv1.CrossAnchorList
	if err := from.List(ctx, &anchors, client.InNamespace(fed.Namespace), client.MatchingLabels{federationLabel: fed.Name}); err != nil {
		return err
	}
	slices.SortFunc(anchors.Items, func(a, b fv1.CrossAnchor) int { return strings.Compare(a.Name, b.Name) })
	var subs []fv1.Submission // read once, when an anchor needs finishing
	for i := range anchors.Items {
		ca := &anchors.Items[i]
		if fed.Status.LastAnchor != nil && ca.Name <= string(fed.Status.LastAnchor.AnchorID) {
			continue
		}
		if subs == nil {
			var all fv1.SubmissionList
			if err := r.APIReader.List(ctx, &all, client.InNamespace(fed.Namespace)); err != nil {
				return err
			}
			subs = all.Items
		}
		if err := r.markCovered(ctx, fed, ca, subs); err != nil {
			return err
		}
	}
	return nil
}
