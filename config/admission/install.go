package admission

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

const (
	// enforceTimeout bounds the wait for the API server to load the policy, which it does
	// asynchronously, usually within a second.
	enforceTimeout = time.Minute
	// probeInterval is how often the wait asks again.
	probeInterval = 100 * time.Millisecond
	// probeUser is who the wait impersonates: a cluster administrator, so that RBAC allows
	// the probe and only the policy can refuse it.
	probeUser = "cairn-admission-probe"
	// probeNamespace exists in every cluster.
	probeNamespace = "default"
	// refusal begins every message of the policy.
	refusal = "only the federation manager ("
)

// Install creates the embedded policy and its binding through cfg, or updates them when
// they exist, then waits until the API server enforces them: until a server-side dry-run
// create of a Submission by another user is refused with the policy's message. cfg must be
// a cluster administrator's (it writes admission policies and impersonates the probe
// user). Install gives up after a minute, or when ctx ends, saying what the last probe got.
func Install(ctx context.Context, cfg *rest.Config) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return fmt.Errorf("install admission policy: %w", err)
	}
	for _, obj := range objs {
		if err := createOrUpdate(ctx, c, obj); err != nil {
			return fmt.Errorf("install admission policy %s: %w", obj.GetName(), err)
		}
	}
	return waitEnforced(ctx, cfg)
}

// createOrUpdate creates obj, or replaces the spec of the object of its name.
func createOrUpdate(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj.DeepCopyObject().(client.Object))
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetResourceVersion(existing.GetResourceVersion())
	return c.Update(ctx, obj)
}

// waitEnforced polls a dry-run create of a Submission as probeUser until the policy
// refuses it.
func waitEnforced(ctx context.Context, cfg *rest.Config) error {
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: probeUser, Groups: []string{"system:masters"}}
	c, err := client.New(probeCfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return fmt.Errorf("wait for admission policy: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, enforceTimeout)
	defer cancel()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		err := c.Create(ctx, probeSubmission(), client.DryRunAll)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), refusal) {
			return nil
		}
		select {
		case <-ctx.Done():
			got := "it was accepted"
			if err != nil {
				got = err.Error()
			}
			return fmt.Errorf("admission policy not enforced: a dry-run create of a Submission as %s was not refused (%s): %w", probeUser, got, ctx.Err())
		case <-tick.C:
		}
	}
}

// probeSubmission is a valid Submission (config/samples' one), so that only the policy
// can refuse it: the API server checks the schema before it asks admission policies.
func probeSubmission() *fv1.Submission {
	return &fv1.Submission{
		ObjectMeta: metav1.ObjectMeta{Namespace: probeNamespace, Name: "cairn-admission-probe"},
		Spec: fv1.SubmissionSpec{
			OperatorID:     "op_032760a40378d8c2",
			ChainSignature: "10e47b9da3efbf2e32d9c2b21de1d4db480ea02c6843de13436f3ea00e201467",
			EntryCount:     42,
			FirstSeq:       1,
			LastSeq:        42,
			FirstPrevHash:  "0000000000000000000000000000000000000000000000000000000000000000",
			LastHMACHash:   "289ddcf0a1127bb76bfe143e36224c9e802812111efdf9c33ced8692444616cc",
			ExportedAt:     "2026-11-21T12:00:00Z",
			SignedHeader:   "{}",
			Signature:      "yA2lCwimcSu/Gk0XTCo8bGc0m8VllA18G7YTJIFZxA9JpIL/j8T7GxjWnA2Ov8o16fZZsWyDO9aKz8Juk12sAA==",
			PublicKeyPEM:   "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAQQXh/PafmX6IREAtfxOPzqpKs8FWwV/5t3ZP7AWYSHQ=\n-----END PUBLIC KEY-----\n",
		},
	}
}

// newScheme knows the admission kinds and the federation's.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(fv1.AddToScheme(s))
	return s
}
