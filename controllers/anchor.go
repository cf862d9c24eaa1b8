package controllers

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/anchortree"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the anchor run. It decides what it binds from facts no operator can make
// ambiguous, and waits for no other controller:
//
//   - what every trusted anchor bound (the ledger: per operator, the highest lastSeq an
//     anchor bound, read past the cache so that no anchor is missed);
//   - the operators' accepted submissions above that seq (an operator's accepted
//     submissions form one chain, since a Submission is named after its first seq), of
//     which the newest gives the operator's chain signature and lastSeq.
//
// It binds them into as many signed seed-form CrossAnchors as it takes (at most
// federation.MaxParticipantsPerAnchor operators each), all at one anchoredAt, or, when
// they are more than the Federation's seedFormMaxParticipants and a history store keeps
// leaves, into one Merkle-form anchor; and records the last as the Federation's last
// anchor. That is all a run writes. Whether a
// submission is anchored follows from the anchors (federation.Ledger, federation.Covers);
// the Submission controller's marking of it, later, is for readers, and no run waits for
// it. A run that stopped after creating an anchor is finished by adoptAnchors.

// errNotEnoughParticipants means fewer operators have pending submissions than the
// Federation's minParticipants.
var errNotEnoughParticipants = errors.New("not enough participants")

// run is one anchor run. It returns the anchors it made, in order, and how many
// submissions they bind. A run for an anchor request (request not "") stamps the request
// on its anchors, and returns errRequestAdopted when adopting the anchors finds the
// request handled already.
func (r *FederationReconciler) run(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, request string) ([]*fv1.CrossAnchor, int, error) {
	if err := r.adoptAnchors(ctx, r.APIReader, fed); err != nil {
		return nil, 0, err
	}
	if request != "" && federation.AnchorRequestHandled(fed, request) {
		return nil, 0, errRequestAdopted
	}
	// Past the cache: a run that missed an anchor would bind its operators again.
	if err := r.Ledger.Sync(ctx, r.APIReader, fed); err != nil {
		return nil, 0, fmt.Errorf("read the anchors: %w", err)
	}
	bound, covered, err := r.bindings(ctx, fed)
	if err != nil {
		return nil, 0, err
	}
	if len(bound) < int(max(fed.Spec.MinParticipants, 1)) {
		return nil, 0, fmt.Errorf("%w: %d operators have pending submissions, minParticipants is %d",
			errNotEnoughParticipants, len(bound), fed.Spec.MinParticipants)
	}
	anchors, err := r.createAnchors(ctx, fed, key, bound, covered, request)
	if len(anchors) > 0 {
		setLastAnchor(fed, anchors[len(anchors)-1])
	}
	if err != nil {
		return anchors, 0, err
	}
	return anchors, countCovered(covered), nil
}

// bindings returns, in operator ID order, what the run binds for each operator that fed
// does not suspend and that has accepted submissions above its anchored seq: the newest
// of them. covered counts those submissions by operator. The submissions come from the
// cache (one the cache has not seen yet waits for the next run), read-only.
func (r *FederationReconciler) bindings(ctx context.Context, fed *fv1.Federation) ([]fv1.Participant, map[fv1.OperatorID]int, error) {
	pending, err := pendingSubmissions(ctx, r.Client, fed.Namespace)
	if err != nil {
		return nil, nil, err
	}
	newest := map[fv1.OperatorID]*fv1.Submission{}
	covered := map[fv1.OperatorID]int{}
	for i := range pending {
		s := &pending[i]
		if _, suspended := fed.Suspension(s.Spec.OperatorID); len(suspended) > 0 ||
			s.Spec.LastSeq <= r.Ledger.Through(fed, s.Spec.OperatorID) {
			continue
		}
		covered[s.Spec.OperatorID]++
		if cur, ok := newest[s.Spec.OperatorID]; !ok || s.Spec.LastSeq > cur.Spec.LastSeq {
			newest[s.Spec.OperatorID] = s
		}
	}
	bound := make([]fv1.Participant, 0, len(newest))
	for id, s := range newest {
		bound = append(bound, fv1.Participant{OperatorID: id, ChainSignature: s.Spec.ChainSignature, LastSeq: s.Spec.LastSeq})
	}
	slices.SortFunc(bound, func(a, b fv1.Participant) int { return strings.Compare(string(a.OperatorID), string(b.OperatorID)) })
	return bound, covered, nil
}

// countCovered sums covered.
func countCovered(covered map[fv1.OperatorID]int) int {
	n := 0
	for _, c := range covered {
		n += c
	}
	return n
}

// pendingSubmissions returns the accepted submissions of namespace that no anchor is
// marked on yet, from c's federation.PendingIndex: read-only, not copied out of the cache. Marking
// lags the anchors, so some of them may be anchored already: the ledger tells.
func pendingSubmissions(ctx context.Context, c client.Reader, namespace string) ([]fv1.Submission, error) {
	var list fv1.SubmissionList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{federation.PendingIndex: federation.AllPending},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// createAnchors signs and creates the CrossAnchors that bind bound (in operator ID
// order), federation.MaxParticipantsPerAnchor operators each, all at one anchoredAt and
// stamped with request when the run is an anchor request's. Each is folded into the
// ledger once created. It returns those created, also when a later one failed.
func (r *FederationReconciler) createAnchors(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, bound []fv1.Participant,
	covered map[fv1.OperatorID]int, request string) ([]*fv1.CrossAnchor, error) {
	now := r.now().UTC()
	if r.Merkle != nil && len(bound) > federation.SeedFormMaxParticipants(fed) {
		ca, tree, err := r.createMerkleAnchor(ctx, fed, key, now, bound)
		if err == nil {
			ca.Annotations = stampRun(ca.Annotations, request, countCovered(covered), 1, 1)
			err = r.create(ctx, fed, ca, tree)
		}
		if err != nil {
			return nil, err
		}
		return []*fv1.CrossAnchor{ca}, nil
	}
	size := cmp.Or(r.MaxParticipants, federation.MaxParticipantsPerAnchor)
	parts := (len(bound) + size - 1) / size
	var made []*fv1.CrossAnchor
	for part := range parts {
		ps := bound[part*size : min((part+1)*size, len(bound))]
		ca, err := r.createAnchor(ctx, fed, key, now, ps)
		if err == nil {
			n := 0
			for _, p := range ps {
				n += covered[p.OperatorID]
			}
			ca.Annotations = stampRun(ca.Annotations, request, n, part+1, parts)
			err = r.create(ctx, fed, ca, nil)
		}
		if err != nil {
			return made, err
		}
		made = append(made, ca)
	}
	return made, nil
}

// createAnchor names and signs the CrossAnchor that binds ps at now.
func (r *FederationReconciler) createAnchor(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, now time.Time, ps []fv1.Participant) (*fv1.CrossAnchor, error) {
	id, err := r.nextAnchorID(ctx, fed, now)
	if err != nil {
		return nil, err
	}
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: id,
		Labels:          map[string]string{federation.FederationLabel: fed.Name},
		OwnerReferences: []metav1.OwnerReference{federation.RecordOwner(fed)}}}
	ca.Spec.AnchorID, ca.Spec.AnchoredAt, ca.Spec.Participants = fv1.AnchorID(id), protocol.FormatAnchoredAt(now), ps
	receipt := federation.AnchorReceipt(ca)
	if receipt.CrossAnchorHash, err = protocol.CrossAnchorHash(receipt.ParticipatingOperators, receipt.AnchoredAt); err != nil {
		return nil, err
	}
	if _, err := protocol.SignReceipt(&receipt, key); err != nil {
		return nil, err
	}
	ca.Spec.CrossAnchorHash = fv1.Hash(receipt.CrossAnchorHash)
	ca.Spec.FederationSignature = fv1.Signature(receipt.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(receipt.FederationPublicKeyPEM)
	return ca, nil
}

// createMerkleAnchor names and signs the Merkle-form CrossAnchor that binds bound at now
// (docs/PROTOCOL.md §7), and stores its leaves in the history store first: an anchor
// never exists without its leaves. It returns the anchor's tree. The signature is the one every
// participant's receipt carries (it leaves out the leaf and proof); SignReceipt checks it
// in full on the first participant's receipt.
func (r *FederationReconciler) createMerkleAnchor(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, now time.Time,
	bound []fv1.Participant,
) (*fv1.CrossAnchor, *anchortree.Anchor, error) {
	id, err := r.nextAnchorID(ctx, fed, now)
	if err != nil {
		return nil, nil, err
	}
	leaves := federation.MerkleLeaves(bound)
	tree, err := anchortree.Build(leaves)
	if err != nil {
		return nil, nil, err
	}
	root := tree.Root()
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: id,
		Labels:          map[string]string{federation.FederationLabel: fed.Name},
		OwnerReferences: []metav1.OwnerReference{federation.RecordOwner(fed)}}}
	ca.Spec.AnchorID, ca.Spec.AnchoredAt, ca.Spec.AnchorForm = fv1.AnchorID(id), protocol.FormatAnchoredAt(now), fv1.AnchorFormMerkle
	ca.Spec.Tree = &fv1.AnchorTree{Size: int64(tree.Size()), RootHash: fv1.Hash(hex.EncodeToString(root[:]))}
	receipt := federation.AnchorReceipt(ca)
	if receipt.CrossAnchorHash, err = protocol.MerkleAnchorHash(root, tree.Size(), receipt.AnchoredAt); err != nil {
		return nil, nil, err
	}
	if receipt.InclusionProof, err = tree.InclusionProof(0); err != nil {
		return nil, nil, err
	}
	receipt.Leaf = &leaves[0]
	if _, err := protocol.SignReceipt(&receipt, key); err != nil {
		return nil, nil, err
	}
	ca.Spec.CrossAnchorHash = fv1.Hash(receipt.CrossAnchorHash)
	ca.Spec.FederationSignature = fv1.Signature(receipt.FederationSignature)
	ca.Spec.FederationPublicKeyPEM = fv1.PublicKeyPEM(receipt.FederationPublicKeyPEM)
	if err := r.Merkle.Store.PutLeaves(ctx, fed, id, root, leaves); err != nil {
		return nil, nil, err
	}
	return ca, anchortree.Of(leaves, tree), nil
}

// create creates ca, remembers that the federation made it and folds it into the ledger:
// a Merkle-form anchor with the tree it was made of, which readers then need not read
// back from the history store.
func (r *FederationReconciler) create(ctx context.Context, fed *fv1.Federation, ca *fv1.CrossAnchor, tree *anchortree.Anchor) error {
	if err := r.Create(ctx, ca); err != nil {
		return fmt.Errorf("create CrossAnchor %s: %w", ca.Name, err)
	}
	r.Trust.Remember(ca)
	if federation.IsMerkle(ca) {
		r.Merkle.Remember(fed, ca, tree)
		r.Ledger.FoldLeaves(fed, ca, tree.Leaves())
	} else {
		r.Ledger.Fold(fed, ca)
	}
	if r.Hooks.AnchorCreated != nil {
		r.Hooks.AnchorCreated(ca)
	}
	return nil
}

// stampRun marks an anchor as part (1-based) of parts of its run, which binds
// submissions, and as made by the run of anchor request id when id is not "".
func stampRun(annotations map[string]string, id string, submissions, part, parts int) map[string]string {
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[fv1.AnchorRunPartAnnotation] = strconv.Itoa(part) + "/" + strconv.Itoa(parts)
	if id != "" {
		annotations[fv1.AnchorRequestIDAnnotation] = id
		annotations[fv1.AnchorSubmissionsAnnotation] = strconv.Itoa(submissions)
	}
	return annotations
}

// lastPart reports whether ca is the last anchor of its run: its run-part annotation
// says so, or it has none (anchors made before runs had parts were their run's only one).
func lastPart(ca *fv1.CrossAnchor) bool {
	part, parts, ok := strings.Cut(ca.Annotations[fv1.AnchorRunPartAnnotation], "/")
	return !ok || part == parts
}
