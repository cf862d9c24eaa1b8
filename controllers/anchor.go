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
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file is the anchor run: bind the latest pending submission of each operator into
// one signed CrossAnchor and record it as the Federation's last anchor. That is all a run
// writes; marking the submissions it covers is the Submission controller's (coverage.go).
// A run that stopped after creating its CrossAnchor is finished by adoptAnchors.

var (
	// errNotEnoughParticipants means fewer operators have pending submissions than the
	// Federation's minParticipants.
	errNotEnoughParticipants = errors.New("not enough participants")
	// errMarking means the Submission controller has not yet marked every submission the
	// last anchor covers: a run now would see them as pending and bind them again.
	errMarking = errors.New("the last anchor's submissions are still being marked")
)

// run is one anchor run. The anchors are read past the cache, since a view that missed
// the last anchor would bind its submissions again; the pending submissions come from
// the cache, since one the cache has not seen yet just waits for the next run, and the
// last anchor's lastSeqs tell which of them it already covers. It returns the new anchor
// and how many submissions it covers. A run for an anchor request (request not "")
// stamps the request on the anchor, and returns errRequestAdopted when adopting the
// anchors finds the request handled already.
func (r *FederationReconciler) run(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, request string) (*fv1.CrossAnchor, int, error) {
	if err := r.adoptAnchors(ctx, r.APIReader, fed); err != nil {
		return nil, 0, err
	}
	if request != "" && federation.AnchorRequestHandled(fed, request) {
		return nil, 0, errRequestAdopted
	}
	last, err := r.lastAnchor(ctx, r.APIReader, fed)
	if err != nil {
		return nil, 0, err
	}
	pending, err := pendingSubmissions(ctx, r.Client, fed.Namespace)
	if err != nil {
		return nil, 0, err
	}
	for i := range pending {
		if last != nil && federation.Covers(last, &pending[i]) {
			return nil, 0, fmt.Errorf("%w: %s is not marked yet", errMarking, pending[i].Name)
		}
	}
	pending = withoutSuspended(fed, pending)
	ca, err := r.createAnchor(ctx, fed, key, pending, request)
	if err != nil {
		return nil, 0, err
	}
	if r.Hooks.AnchorCreated != nil {
		r.Hooks.AnchorCreated(ca)
	}
	setLastAnchor(fed, ca)
	return ca, len(pending), nil
}

// pendingSubmissions returns the accepted submissions of namespace that no anchor is
// marked on, from c's pendingIndex: read-only, not copied out of the cache.
func pendingSubmissions(ctx context.Context, c client.Reader, namespace string) ([]fv1.Submission, error) {
	var list fv1.SubmissionList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{pendingIndex: allPending},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// createAnchor signs a cross-anchor over the latest pending submission of each operator
// and creates its CrossAnchor, stamped with request when the run is an anchor request's.
func (r *FederationReconciler) createAnchor(ctx context.Context, fed *fv1.Federation, key ed25519.PrivateKey, pending []fv1.Submission, request string) (*fv1.CrossAnchor, error) {
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
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, Labels: map[string]string{federation.FederationLabel: fed.Name},
		Finalizers: []string{recordFinalizer}}}
	ca.Spec.AnchoredAt = protocol.FormatAnchoredAt(now)
	stampRequest(ca, request, len(pending))
	for id, s := range latest {
		ca.Spec.Participants = append(ca.Spec.Participants, fv1.Participant{OperatorID: id, ChainSignature: s.Spec.ChainSignature, LastSeq: s.Spec.LastSeq})
	}
	slices.SortFunc(ca.Spec.Participants, func(a, b fv1.Participant) int { return strings.Compare(string(a.OperatorID), string(b.OperatorID)) })
	id, err := r.nextAnchorID(ctx, fed, now)
	if err != nil {
		return nil, err
	}
	ca.Name, ca.Spec.AnchorID = id, fv1.AnchorID(id)
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
	if err := r.Create(ctx, ca); err != nil {
		return nil, fmt.Errorf("create CrossAnchor %s: %w", ca.Name, err)
	}
	r.Trust.Remember(ca)
	return ca, nil
}

// nextAnchorID returns anchor-YYYYMMDD-NNN for the day of now: one more than the day's
// highest trusted anchor in the namespace, and than fed's AnchorsAfterAnnotation,
// skipping names that something else took.
func (r *FederationReconciler) nextAnchorID(ctx context.Context, fed *fv1.Federation, now time.Time) (string, error) {
	prefix := "anchor-" + now.Format("20060102") + "-"
	after, err := anchorsAfter(fed, prefix)
	if err != nil {
		return "", err
	}
	anchors, err := anchorMetadata(ctx, r.APIReader, fed.Namespace)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	next := 1
	for i := len(anchors) - 1; i >= 0; i-- { // newest first
		name := anchors[i].Name
		n, err := strconv.Atoi(strings.TrimPrefix(name, prefix))
		if err != nil || !strings.HasPrefix(name, prefix) {
			continue
		}
		taken[name] = true
		if next == 1 {
			trusted, err := r.trusted(ctx, r.APIReader, fed, &anchors[i])
			if err != nil {
				return "", err
			}
			if trusted {
				next = n + 1
			}
		}
	}
	next = max(next, after+1)
	for taken[fmt.Sprintf("%s%03d", prefix, next)] {
		next++
	}
	if next > 999 {
		return "", fmt.Errorf("%s999 is taken: no more anchors today", prefix)
	}
	return fmt.Sprintf("%s%03d", prefix, next), nil
}

// anchorsAfter returns the sequence number that fed's AnchorsAfterAnnotation sets for the
// day of prefix ("anchor-YYYYMMDD-"): 0 when it is absent or names an earlier day.
func anchorsAfter(fed *fv1.Federation, prefix string) (int, error) {
	id, ok := fed.Annotations[fv1.AnchorsAfterAnnotation]
	if !ok {
		return 0, nil
	}
	bad := fmt.Errorf("annotation %s: %q is not an anchor ID of today or earlier: no anchor is made until it is", fv1.AnchorsAfterAnnotation, id)
	if len(id) != len(prefix)+3 || !strings.HasPrefix(id, "anchor-") || id[len(prefix)-1] != '-' {
		return 0, bad
	}
	if _, err := time.Parse("20060102", id[len("anchor-"):len(prefix)-1]); err != nil {
		return 0, bad
	}
	seq := id[len(prefix):]
	n, err := strconv.Atoi(seq)
	switch day := id[:len(prefix)]; {
	case err != nil || strings.Trim(seq, "0123456789") != "":
		return 0, bad
	case day > prefix: // a day after now: an ID before it could be one it names
		return 0, bad
	case day < prefix:
		return 0, nil
	}
	return n, nil
}

// setLastAnchor records ca as fed's last anchor.
func setLastAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) {
	at, _ := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
	fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: ca.Spec.AnchorID, AnchoredAt: metav1.NewTime(at), CrossAnchorHash: ca.Spec.CrossAnchorHash}
}

// lastAnchor reads fed's last anchor from from, or returns nil when it has none. The
// anchor must be trusted: status names it, and status is no evidence.
func (r *FederationReconciler) lastAnchor(ctx context.Context, from client.Reader, fed *fv1.Federation) (*fv1.CrossAnchor, error) {
	if fed.Status.LastAnchor == nil {
		return nil, nil
	}
	var ca fv1.CrossAnchor
	key := client.ObjectKey{Namespace: fed.Namespace, Name: string(fed.Status.LastAnchor.AnchorID)}
	if err := from.Get(ctx, key, &ca, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("read the last anchor %s: %w", key.Name, err)
	}
	if err := r.Trust.Verify(fed, &ca); err != nil {
		return nil, fmt.Errorf("the last anchor: %w", err)
	}
	return &ca, nil
}

// adoptAnchors records as fed's last anchor its newest trusted CrossAnchor, when that is
// newer than status says: a run that stopped after creating it. The anchor request that
// run was for, stamped on the anchor, is recorded as handled. It reads from from: the
// cache on every reconcile, the API server right before a run.
func (r *FederationReconciler) adoptAnchors(ctx context.Context, from client.Reader, fed *fv1.Federation) error {
	anchors, err := anchorMetadata(ctx, from, fed.Namespace, client.MatchingLabels{federation.FederationLabel: fed.Name})
	if err != nil {
		return err
	}
	for i := len(anchors) - 1; i >= 0; i-- { // newest first
		if fed.Status.LastAnchor != nil && anchors[i].Name <= string(fed.Status.LastAnchor.AnchorID) {
			return nil
		}
		trusted, err := r.trusted(ctx, from, fed, &anchors[i])
		if err != nil {
			return err
		}
		if !trusted {
			continue
		}
		var ca fv1.CrossAnchor
		if err := from.Get(ctx, client.ObjectKeyFromObject(&anchors[i]), &ca, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		setLastAnchor(fed, &ca)
		adoptRequest(fed, &ca, r.now())
		return nil
	}
	return nil
}

// trusted reports whether the anchor m names is trusted, from a remembered verdict or by
// reading and verifying it.
func (r *FederationReconciler) trusted(ctx context.Context, from client.Reader, fed *fv1.Federation, m *metav1.PartialObjectMetadata) (bool, error) {
	if trusted, ok := r.Trust.Known(fed, m.UID, m.Generation); ok {
		return trusted, nil
	}
	var ca fv1.CrossAnchor
	if err := from.Get(ctx, client.ObjectKeyFromObject(m), &ca, client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	return r.Trust.Verify(fed, &ca) == nil, nil
}

// anchorMetadata lists the metadata of the CrossAnchors in namespace, in name order
// (which is the order anchors are made in).
func anchorMetadata(ctx context.Context, from client.Reader, namespace string, opts ...client.ListOption) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(fv1.GroupVersion.WithKind("CrossAnchorList"))
	if err := from.List(ctx, list, append(opts, client.InNamespace(namespace))...); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}
