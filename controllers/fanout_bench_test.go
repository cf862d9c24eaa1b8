package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// BenchmarkFederationFanOut counts the FederationOperator controller's reconciles that
// changes of a Federation cause, on a real API server with 2,000 registered operators in
// its namespace: fanOutWrites status writes that change neither a suspension nor an
// approval (the counts, nextAnchorTime: what every anchor run and every registration
// writes), then one GitOps suspension of one operator. The controller runs alone in its
// manager, without a log. reconciles/status-write and reconciles/suspension are the
// numbers of docs/BENCHMARKS.md; ns/op is the whole run, fixtures included.
func BenchmarkFederationFanOut(b *testing.B) {
	const n = 2000
	const fanOutWrites = 20
	RegisterTestingT(b) // the operator fixtures assert with Gomega
	c, _ := benchNamespace(b)
	ctx := context.Background()
	startManager(b, func(_ context.Context, mgr ctrl.Manager) error {
		return (&FederationOperatorReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("bench")}).SetupWithManager(mgr)
	})
	for range b.N {
		_, ns := benchNamespace(b)
		fed := benchFederation(b, c, ns, nil)
		ops := registerAll(b, c, ns, n, "fan-out")
		settled := quiet(b)

		changeFed := func(change func(*fv1.Federation), status bool) {
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var f fv1.Federation
				if err := c.Get(ctx, client.ObjectKeyFromObject(fed), &f); err != nil {
					return err
				}
				change(&f)
				if status {
					return c.Status().Update(ctx, &f)
				}
				return c.Update(ctx, &f)
			}); err != nil {
				b.Fatal(err)
			}
		}
		for i := range fanOutWrites {
			changeFed(func(f *fv1.Federation) {
				next := time.Now().Add(time.Duration(i+1) * time.Hour)
				f.Status.PendingCount, f.Status.OperatorCount, f.Status.TotalOperators = int32(i+1), n, n
				f.Status.NextAnchorTime = &metav1.Time{Time: next}
			}, true)
			time.Sleep(50 * time.Millisecond) // as anchor runs and counts are written: apart, not coalesced
		}
		afterWrites := quiet(b)
		changeFed(func(f *fv1.Federation) {
			f.Spec.SuspendedOperators = []fv1.OperatorSuspension{{OperatorID: ops[0].id(), Reason: "fan-out benchmark"}}
		}, false)
		afterSuspension := quiet(b)
		b.ReportMetric(float64(afterWrites-settled)/fanOutWrites, "reconciles/status-write")
		b.ReportMetric(float64(afterSuspension-afterWrites), "reconciles/suspension")
	}
}

// quiet waits until the federationoperator controller's queue has been empty and its
// reconcile count unchanged for a second, and returns that count.
func quiet(b *testing.B) float64 {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	last, since := -1.0, time.Now()
	for time.Now().Before(deadline) {
		total, depth := operatorControllerMetrics(b)
		if total != last || depth > 0 {
			last, since = total, time.Now()
		} else if time.Since(since) > time.Second {
			return total
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatal("the federationoperator controller did not settle in 5 minutes")
	return 0
}

// operatorControllerMetrics reads, from controller-runtime's registry, how many reconciles
// the federationoperator controller has finished (any result) and its queue's depth.
func operatorControllerMetrics(b *testing.B) (total, depth float64) {
	b.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case mf.GetName() == "controller_runtime_reconcile_total" && labels["controller"] == "federationoperator":
				total += m.GetCounter().GetValue()
			case mf.GetName() == "workqueue_depth" && labels["name"] == "federationoperator":
				depth += m.GetGauge().GetValue()
			}
		}
	}
	return total, depth
}
