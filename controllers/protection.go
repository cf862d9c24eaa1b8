package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// recordFinalizer keeps a CrossAnchor while its Federation exists. A cross-anchor is a
// record: receipts name it, the Submissions it covers are marked with it, and the next
// anchor run starts from the last one, so deleting it would leave all three pointing at
// nothing. As kubernetes.io/pvc-protection does for a volume in use, the finalizer lets
// a delete through but keeps the object, Terminating, until it may go: once the
// Federation named by its label is deleted. Anchor runs create CrossAnchors with it; the
// CrossAnchor controller adds it to those made before it existed.
const recordFinalizer = "federation.cairn.dev/record"

// protect keeps ca's finalizer in step with its Federation: it adds the finalizer to a
// live trusted anchor of a Federation, and removes it from a deleted one once the
// Federation is gone or going, or when the anchor is not trusted (a record the federation
// did not make is not its to keep), in which case it reports released and ca is not to
// be reconciled further. A deleted trusted anchor whose Federation exists is kept, with a
// Warning Event.
func (r *CrossAnchorReconciler) protect(ctx context.Context, ca *fv1.CrossAnchor, trusted bool) (released bool, err error) {
	fedName := ca.Labels[federation.FederationLabel]
	has := slices.Contains(ca.Finalizers, recordFinalizer)
	if ca.DeletionTimestamp == nil {
		if has || fedName == "" || !trusted { // an anchor no run made is not ours to keep
			return false, nil
		}
		return false, r.setFinalizers(ctx, ca, append(slices.Clone(ca.Finalizers), recordFinalizer))
	}
	if !has {
		return true, nil
	}
	if !trusted {
		return true, r.setFinalizers(ctx, ca, slices.DeleteFunc(slices.Clone(ca.Finalizers), func(f string) bool { return f == recordFinalizer }))
	}
	var fed fv1.Federation
	err = r.Get(ctx, client.ObjectKey{Namespace: ca.Namespace, Name: fedName}, &fed)
	switch {
	case err == nil && fed.DeletionTimestamp == nil:
		r.Recorder.Eventf(ca, nil, corev1.EventTypeWarning, fv1.ReasonDeletionRefused, "Delete",
			"CrossAnchor %s is a record of Federation %s and is kept until the Federation is deleted", ca.Name, fedName)
		return false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	}
	return true, r.setFinalizers(ctx, ca, slices.DeleteFunc(slices.Clone(ca.Finalizers), func(f string) bool { return f == recordFinalizer }))
}

// setFinalizers sets ca's finalizers with a merge patch of the metadata alone (an anchor
// can be a megabyte), which fails with a conflict if ca changed since it was read.
func (r *CrossAnchorReconciler) setFinalizers(ctx context.Context, ca *fv1.CrossAnchor, finalizers []string) error {
	if finalizers == nil {
		finalizers = []string{} // null would leave the list as it is
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": finalizers, "resourceVersion": ca.ResourceVersion}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, ca, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("set the finalizers of CrossAnchor %s: %w", ca.Name, err)
	}
	return nil
}

// deletedAnchorsOf maps a Federation to its CrossAnchors that wait, deleted, for it to go.
func (r *CrossAnchorReconciler) deletedAnchorsOf(ctx context.Context, o client.Object) []reconcile.Request {
	var anchors fv1.CrossAnchorList
	if err := r.List(ctx, &anchors, client.InNamespace(o.GetNamespace()), client.MatchingLabels{federation.FederationLabel: o.GetName()},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range anchors.Items {
		if ca := &anchors.Items[i]; ca.DeletionTimestamp != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ca)})
		}
	}
	return reqs
}

// federationGoing passes a Federation's deletion, and the update that marks it for
// deletion when a finalizer holds it.
var federationGoing = predicate.Funcs{
	CreateFunc:  func(crevent.CreateEvent) bool { return false },
	UpdateFunc:  func(e crevent.UpdateEvent) bool { return e.ObjectNew.GetDeletionTimestamp() != nil },
	DeleteFunc:  func(crevent.DeleteEvent) bool { return true },
	GenericFunc: func(crevent.GenericEvent) bool { return false },
}
