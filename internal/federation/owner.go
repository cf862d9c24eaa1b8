package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// RecordOwner is the owner reference of fed's records (its CrossAnchors): once fed is
// deleted, the garbage collector deletes them, and nobody else may (config/admission). A
// record goes only with its whole Federation or namespace.
//
// Controller is true: fed's controller made the record and is the only one that manages
// it, so metav1.GetControllerOf names fed, and the API server refuses a second controller
// reference beside it. BlockOwnerDeletion is true: a foreground delete of fed finishes only
// once its records are gone, so no record outlives the Federation that vouches for it.
// Where the OwnerReferencesPermissionEnforcement admission plugin runs, setting it takes
// update on federations/finalizers, which the manager's role grants.
//
// fed must have been read from the API server: the reference names its UID.
func RecordOwner(fed *fv1.Federation) metav1.OwnerReference {
	return *metav1.NewControllerRef(fed, fv1.GroupVersion.WithKind("Federation"))
}
