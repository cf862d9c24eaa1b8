package federation

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// A second Federation in a namespace (made before the webhook that refuses it, or without
// it) must neither block the first one's records nor be taken for their Federation.
func TestNamespaceFederationIsTheOldest(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	at := func(ns, name string, minute int) client.Object {
		return &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 28, 12, minute, 0, 0, time.UTC))}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		at("one", "cairn", 0),
		at("two", "zeta", 0), at("two", "alpha", 5), // the older first, whatever the names
		at("same-second", "beta", 0), at("same-second", "alpha", 0), // then by name
		at("other", "elsewhere", 0),
	).Build()

	for ns, want := range map[string]string{"one": "cairn", "two": "zeta", "same-second": "alpha"} {
		fed, err := NamespaceFederation(context.Background(), c, ns)
		if err != nil {
			t.Errorf("namespace %s: %v", ns, err)
			continue
		}
		if fed.Name != want || fed.Namespace != ns {
			t.Errorf("namespace %s: Federation %s/%s, want %s", ns, fed.Namespace, fed.Name, want)
		}
	}
	if fed, err := NamespaceFederation(context.Background(), c, "none"); err == nil {
		t.Errorf("a namespace without a Federation: got %s, want an error", fed.Name)
	}
}
