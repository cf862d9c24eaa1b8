package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
)

// The manager's cache fills each kind from its own watch, so an operator applied right
// after its Federation (a restore, a GitOps sync) can reach the controller before the
// Federation does. Read from the cache alone, the namespace then had no Federation and
// the operator registered open: without the approval the Federation asks for, and
// without the log's record of which keys were held before (the restore spec's thief,
// holding a key its victim rotated out, came back Registered).
func TestRegistrationFollowsAFederationTheCacheHasNotSeen(t *testing.T) {
	RegisterTestingT(t)
	scheme := runtime.NewScheme()
	Expect(fv1.AddToScheme(scheme)).To(Succeed())
	fed := &fv1.Federation{}
	fed.Namespace, fed.Name = "org", "fed"
	fed.Spec.Registration = fv1.RegistrationApproval
	op := newTestOperator(176, "Early Org")
	obj := op.object("org", "early")

	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(&fv1.FederationOperator{})
	Expect(federation.RegisterIndexes(context.Background(), builderIndexer{builder})).To(Succeed())
	cache := builder.Build() // the Federation not seen yet
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(fed, obj).Build()
	r := &FederationOperatorReconciler{Client: cache, APIReader: api, Recorder: events.NewFakeRecorder(10)}

	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	Expect(err).NotTo(HaveOccurred())
	var got fv1.FederationOperator
	Expect(cache.Get(context.Background(), client.ObjectKeyFromObject(obj), &got)).To(Succeed())
	Expect(got.Status.Phase).To(Equal(fv1.PhasePending), "registered without the approval its Federation requires")
}

// builderIndexer adds the manager's indexes to a fake client being built.
type builderIndexer struct{ b *fake.ClientBuilder }

func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	i.b.WithIndex(obj, field, f)
	return nil
}
