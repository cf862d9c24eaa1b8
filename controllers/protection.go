package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// A cross-anchor is a record: receipts name it, the Submissions it covers are marked with
// it, and the next anchor run starts from the last one. Two things keep it:
//
//   - the admission policy (config/admission), which lets nobody but the manager, the
//     garbage collector and the namespace controller delete it or change its owners;
//   - its owner reference to its Federation (federation.RecordOwner), through which the
//     garbage collector deletes it once the Federation is deleted, and not before.
//
// So a record goes only with its whole Federation or namespace.

// recordFinalizer is the finalizer that kept a CrossAnchor, Terminating, while its
// Federation existed. It made an administrator's delete hang for as long as the Federation
// lived, and did not keep the record from anyone who then removed it, so the CrossAnchor
// controller now takes it off every anchor that has it, live or deleted.
const recordFinalizer = "federation.cairn.dev/record"

// Setting an owner reference with blockOwnerDeletion takes update on the owner's
// finalizers where the OwnerReferencesPermissionEnforcement admission plugin runs.
// +kubebuilder:rbac:groups=federation.cairn.dev,resources=federations/finalizers,verbs=update

// protect keeps ca's metadata a record's. It takes recordFinalizer off, and gives a live
// anchor of fed that the federation made (trusted) fed as its owner when it has no
// controller yet; an anchor the federation did not make is not its to keep, and gets no
// owner. It reports released for a deleted anchor, which is not reconciled further.
func (r *CrossAnchorReconciler) protect(ctx context.Context, ca *fv1.CrossAnchor, fed *fv1.Federation, trusted bool) (released bool, err error) {
	changed := map[string]any{}
	if slices.Contains(ca.Finalizers, recordFinalizer) {
		// [], not null: null would leave the list as it is.
		changed["finalizers"] = append([]string{}, slices.DeleteFunc(slices.Clone(ca.Finalizers), isRecordFinalizer)...)
	}
	if ca.DeletionTimestamp == nil && trusted && metav1.GetControllerOf(ca) == nil {
		changed["ownerReferences"] = append(slices.Clone(ca.OwnerReferences), federation.RecordOwner(fed))
	}
	if len(changed) > 0 {
		err = r.patchMetadata(ctx, ca, changed)
	}
	return ca.DeletionTimestamp != nil, err
}

func isRecordFinalizer(f string) bool { return f == recordFinalizer }

// patchMetadata sets the fields of ca's metadata that changed names, with a merge patch of
// the metadata alone (an anchor can be a megabyte), which fails with a conflict if ca
// changed since it was read.
func (r *CrossAnchorReconciler) patchMetadata(ctx context.Context, ca *fv1.CrossAnchor, changed map[string]any) error {
	changed["resourceVersion"] = ca.ResourceVersion
	patch, err := json.Marshal(map[string]any{"metadata": changed})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, ca, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("protect CrossAnchor %s: %w", ca.Name, err)
	}
	return nil
}
