package controllers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the anchor run: pick the pending submissions, sign a cross-anchor over the
// latest of each operator, create its CrossAnchor and record it as the Federation's last
// anchor. Marking the submissions it covers is the Submission controller's (coverage.go).
// A run that stopped after creating its CrossAnchor is finished by adoptAnchors.

var (
	// errNotEnoughParticipants means fewer operators have pending submissions than the
	// Federation's minParticipants.
	errNotEnoughParticipants = errors.New("not enough participants")
	// errStaleCache means the cache holds an older Federation than the API server.
	errStaleCache = errors.New("the cache is behind the API server")
)

// pendingSubmissions returns the accepted submissions in fed's namespace that no anchor
// covers yet, as from reads them (the cache for counting, the API server for a run).
func pendingSubmissions(ctx context.Context, from client.Reader, fed *fv1.Federation) ([]fv1.Submission, error) {
	var all fv1.SubmissionList
	// Read-only: the cache's objects are not copied, only filtered.
	if err := from.List(ctx, &all, client.InNamespace(fed.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	last, err := lastAnchor(ctx, from, fed)
	if err != nil {
		return nil, err
	}
	pending, _ := splitPending(all.Items, last)
	return pending, nil
}

// lastAnchor reads fed's last anchor from from, or returns nil when it has none.
func lastAnchor(ctx context.Context, from client.Reader, fed *fv1.Federation) (*fv1.CrossAnchor, error) {
	if fed.Status.LastAnchor == nil {
		return nil, nil
	}
	var ca fv1.CrossAnchor
	key := client.ObjectKey{Namespace: fed.Namespace, Name: string(fed.Status.LastAnchor.AnchorID)}
	if err := from.Get(ctx, key, &ca, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("read the last anchor %s: %w", key.Name, err)
	}
	return &ca, nil
}

// run is one anchor run on fresh reads: it finishes a run that stopped after creating its
// CrossAnchor, marks what the last anchor covers that the Submission controller has not
// reached yet (normally nothing: runs are an interval apart), then anchors what is
// pending. It returns the new anchor and the submissions it covers.
func (r *FederationReconciler) run(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey) (*fv1.CrossAnchor, []fv1.Submission, error) {
	var fresh fv1.Federation
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(fed), &fresh); err != nil {
		return nil, nil, err
	}
	if fresh.ResourceVersion != fed.ResourceVersion {
		// An older view could miss the last anchor and anchor its submissions again.
		return nil, nil, errStaleCache
	}
	if err := r.adoptAnchors(ctx, r.APIReader, fed); err != nil {
		return nil, nil, err
	}
	last, err := lastAnchor(ctx, r.APIReader, fed)
	if err != nil {
		return nil, nil, err
	}
	var all fv1.SubmissionList
	if err := r.APIReader.List(ctx, &all, client.InNamespace(fed.Namespace)); err != nil {
		return nil, nil, err
	}
	pending, unmarked := splitPending(all.Items, last)
	if err := markAll(ctx, r.Client, unmarked, last); err != nil {
		return nil, nil, err
	}
	ca, err := r.createAnchor(ctx, fed, key, pending)
	if err != nil {
		return nil, nil, err
	}
	failpoint(FailAfterAnchorCreated)
	setLastAnchor(fed, ca)
	return ca, pending, nil
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
		ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Name: receipt.AnchorID, Labels: map[string]string{federationLabel: fed.Name},
			Finalizers: []string{recordFinalizer}},
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
	names, err := anchorNames(ctx, r.APIReader, namespace)
	if err != nil {
		return "", err
	}
	prefix := "anchor-" + now.Format("20060102") + "-"
	next := 1
	for _, name := range names {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && strings.HasPrefix(name, prefix) {
			next = max(next, n+1)
		}
	}
	if next > 999 {
		return "", fmt.Errorf("%s999 exists: no more anchors today", prefix)
	}
	return fmt.Sprintf("%s%03d", prefix, next), nil
}

// setLastAnchor records ca as fed's last anchor.
func setLastAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) {
	at, _ := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
	fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: ca.Spec.AnchorID, AnchoredAt: metav1.NewTime(at), CrossAnchorHash: ca.Spec.CrossAnchorHash}
}

// adoptAnchors records as fed's last anchor the newest CrossAnchor of fed, when it is
// newer than status says: a run that stopped after creating it. It lists the anchors
// from from: the cache on every reconcile, the API server right before a run.
func (r *FederationReconciler) adoptAnchors(ctx context.Context, from client.Reader, fed *fv1.Federation) error {
	names, err := anchorNames(ctx, from, fed.Namespace, client.MatchingLabels{federationLabel: fed.Name})
	if err != nil || len(names) == 0 {
		return err
	}
	newest := names[len(names)-1]
	if fed.Status.LastAnchor != nil && newest <= string(fed.Status.LastAnchor.AnchorID) {
		return nil
	}
	var ca fv1.CrossAnchor
	if err := from.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: newest}, &ca, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	setLastAnchor(fed, &ca)
	return nil
}

// anchorNames lists the names of the CrossAnchors in namespace, in order (which is the
// order they were made in), reading their metadata only.
func anchorNames(ctx context.Context, from client.Reader, namespace string, opts ...client.ListOption) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(fv1.GroupVersion.WithKind("CrossAnchorList"))
	if err := from.List(ctx, list, append(opts, client.InNamespace(namespace))...); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	slices.Sort(names)
	return names, nil
}
