package federation

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

func TestRecordOwnerIsTheFederationAsController(t *testing.T) {
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: "cairn-system", Name: "cairn", UID: "7b3c9d2e-uid"}}
	got := RecordOwner(fed)
	want := metav1.OwnerReference{APIVersion: "federation.cairn.dev/v1alpha1", Kind: "Federation", Name: "cairn",
		UID: "7b3c9d2e-uid", Controller: new(true), BlockOwnerDeletion: new(true)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RecordOwner = %+v, want %+v", got, want)
	}
	ca := &fv1.CrossAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: fed.Namespace, OwnerReferences: []metav1.OwnerReference{got}}}
	if !metav1.IsControlledBy(ca, fed) {
		t.Error("a record with RecordOwner is not controlled by its Federation")
	}
	other := fed.DeepCopy()
	other.UID = "another-federation-of-the-same-name"
	if metav1.IsControlledBy(ca, other) {
		t.Error("a record is controlled by a Federation of its owner's name but another UID")
	}
}
