package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"context"
	"fmt"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// This file adopts what a run that stopped half-way left: its anchors, newest first.

// setLastAnchor records ca as fed's last anchor.
func setLastAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) {
	at, _ := protocol.ParseAnchoredAt(ca.Spec.AnchoredAt)
	fed.Status.LastAnchor = &fv1.AnchorSummary{AnchorID: ca.Spec.AnchorID, AnchoredAt: metav1.NewTime(at), CrossAnchorHash: ca.Spec.CrossAnchorHash}
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

// checkLastAnchor says, in a Warning Event, when the anchor fed's status names as its
// last is gone (deleted past the admission policy, or lost in a restore). The run goes
// on from the anchors that remain: what this process folded into its ledger stays, the
// submissions the anchor bound keep their receipts and log entry, and the next anchor's
// ID still follows it (nextAnchorID).
func (r *FederationReconciler) checkLastAnchor(ctx context.Context, fed *fv1.Federation, evs *[]federationEvent) {
	if fed.Status.LastAnchor == nil {
		return
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(fv1.GroupVersion.WithKind("CrossAnchor"))
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: string(fed.Status.LastAnchor.AnchorID)}, m)
	if !apierrors.IsNotFound(err) {
		return
	}
	msg := fmt.Sprintf("the last anchor %s is gone; anchoring goes on from the anchors that remain, and its receipts and log entry still verify",
		fed.Status.LastAnchor.AnchorID)
	logf.FromContext(ctx).Info("The last anchor is missing", "anchor", fed.Status.LastAnchor.AnchorID)
	*evs = append(*evs, federationEvent{event{corev1.EventTypeWarning, fv1.ReasonAnchorMissing, "Anchor", msg}, nil})
}
