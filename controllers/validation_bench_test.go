package controllers

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// Benchmarks run without the Ginkgo suite (make bench passes -run '^$'), so they start
// their own API server once, and TestMain stops it.
var (
	benchOnce   sync.Once
	benchEnv    *envtest.Environment
	benchClient client.Client
	benchConfig *rest.Config
	benchErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchEnv != nil {
		if err := benchEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop benchmark API server:", err)
		}
	}
	os.Exit(code)
}

// benchNamespace returns a client of a running API server and a fresh namespace on it.
func benchNamespace(b *testing.B) (client.Client, string) {
	b.Helper()
	benchOnce.Do(func() {
		benchEnv = newTestEnv()
		cfg, err := benchEnv.Start()
		if err != nil {
			benchErr = err
			return
		}
		benchConfig = cfg
		benchClient, benchErr = client.New(cfg, client.Options{Scheme: newScheme()})
	})
	if benchErr != nil {
		b.Fatalf("start API server: %v", benchErr)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-bench-"}}
	if err := benchClient.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	// Prime the client's REST mapping so the first measured create does no discovery.
	for _, list := range []client.ObjectList{&federationv1alpha1.SubmissionList{}, &federationv1alpha1.CrossAnchorList{}} {
		if err := benchClient.List(context.Background(), list, client.InNamespace(ns.Name)); err != nil {
			b.Fatal(err)
		}
	}
	return benchClient, ns.Name
}

// BenchmarkCreateSubmission measures one Submission create: JSON decoding, OpenAPI and CEL
// validation, and the etcd write.
func BenchmarkCreateSubmission(b *testing.B) {
	c, ns := benchNamespace(b)
	base := &federationv1alpha1.Submission{}
	if err := decodeSample("federation_v1alpha1_submission.yaml", base); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		s := base.DeepCopy()
		s.Namespace, s.Name = ns, fmt.Sprintf("sub-%d", i)
		if err := c.Create(context.Background(), s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCreateCrossAnchor10kParticipants measures the largest CrossAnchor the design
// allows: 10,000 participants in one object of about 1.1 MB.
func BenchmarkCreateCrossAnchor10kParticipants(b *testing.B) {
	c, ns := benchNamespace(b)
	base := &federationv1alpha1.CrossAnchor{}
	if err := decodeSample("federation_v1alpha1_crossanchor.yaml", base); err != nil {
		b.Fatal(err)
	}
	base.Spec.Participants = participants(10000)
	i := 0
	for b.Loop() {
		a := base.DeepCopy()
		a.Namespace, a.Name = ns, fmt.Sprintf("anchor-20261121-%03d", i%1000)
		if i >= 1000 {
			a.Name = fmt.Sprintf("xa-%d", i)
		}
		if err := c.Create(context.Background(), a); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
