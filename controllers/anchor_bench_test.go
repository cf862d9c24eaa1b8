package controllers

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// createAll creates n objects made by make, 32 at a time.
func createAll(b *testing.B, c client.Client, n int, make func(i int) client.Object, after func(client.Object) error) {
	b.Helper()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error {
			o := make(i)
			if err := c.Create(ctx, o); err != nil {
				return err
			}
			if after != nil {
				return after(o)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAnchorRun10k times one anchor run over 10,000 pending submissions from 10,000
// operators on a real API server, as the Federation controller makes it: read the
// anchors past the cache into the ledger and the pending submissions from the cache's
// index, sign the cross-anchors, create the CrossAnchors (two of 5,000 participants,
// about 0.7 MB each) and record the last in the Federation's status. The log leg is not
// included. The Submission controller, running in a manager, then marks the 10,000
// submissions anchored in the background; s-to-mark is how long after the run that took
// (it is not part of ns/op).
func BenchmarkAnchorRun10k(b *testing.B) { benchmarkAnchorRun(b, 10_000) }

// BenchmarkAnchorRun15k is the same run over 15,000 operators, more than one CrossAnchor
// holds: three anchors. MB-alloc is what the run allocated, MB-held how much more heap
// it left in use.
func BenchmarkAnchorRun15k(b *testing.B) { benchmarkAnchorRun(b, 15_000) }

func benchmarkAnchorRun(b *testing.B, n int) {
	c, _ := benchNamespace(b)
	_, key, _ := ed25519.GenerateKey(nil)
	ctx := context.Background()
	b.ResetTimer() // not the API server's start
	for range b.N {
		b.StopTimer()
		_, ns := benchNamespace(b)
		fed := benchFederation(b, c, ns, key)
		base := &fv1.Submission{}
		if err := decodeSample("federation_v1alpha1_submission.yaml", base); err != nil {
			b.Fatal(err)
		}
		createAll(b, c, n, func(i int) client.Object {
			s := base.DeepCopy()
			sum := sha256.Sum256(fmt.Appendf(nil, "chain %d", i))
			s.Namespace, s.Name = ns, fmt.Sprintf("sub-%d", i)
			s.Spec.OperatorID, s.Spec.ChainSignature = fv1.OperatorID(fmt.Sprintf("op_%016x", i)), fv1.Hash(hex.EncodeToString(sum[:]))
			return s
		}, func(o client.Object) error {
			s := o.(*fv1.Submission)
			s.Status.Ed25519Verified, s.Status.ContinuityVerified = true, true
			setSubmissionCondition(s, fv1.ConditionContinuityVerified, metav1.ConditionTrue, fv1.ReasonVerified, "benchmark")
			return c.Status().Update(ctx, s)
		})
		// Started after the fixtures, which name no registered operator, so that it only
		// marks: the verifier would refuse them. Its first pass over them finds no anchor.
		mgr := startManager(b, func(ctx context.Context, mgr ctrl.Manager) error {
			return (&SubmissionReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("bench"), Trust: &federation.Trust{}}).SetupWithManager(ctx, mgr)
		})
		time.Sleep(3 * time.Second)
		trust := &federation.Trust{}
		r := &FederationReconciler{Client: mgr.GetClient(), APIReader: c, Trust: trust, Ledger: &federation.Ledger{Trust: trust}}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fed), fed); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		anchors, covered, err := r.run(ctx, fed, key, "")
		if err != nil {
			b.Fatal(err)
		}
		created := time.Since(start)
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/1e6, "MB-alloc")
		b.ReportMetric((float64(after.HeapInuse)-float64(before.HeapInuse))/1e6, "MB-held")
		b.ReportMetric(float64(len(anchors)), "anchors")
		if err := c.Status().Update(ctx, fed); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(created.Seconds(), "s-to-create")
		b.ReportMetric((time.Since(start) - created).Seconds(), "s-status-write")

		b.StopTimer()
		participants := 0
		for _, a := range anchors {
			participants += len(a.Spec.Participants)
		}
		if covered != n || participants != n {
			b.Fatalf("%d covered, %d participants, want %d", covered, participants, n)
		}
		start = time.Now()
		waitAll(b, func() (int, error) {
			// From the manager's cache: listing 10,000 submissions from the API server
			// every 50ms would slow the marking it waits for.
			var list fv1.SubmissionList
			err := mgr.GetClient().List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy)
			done := 0
			for _, s := range list.Items {
				if s.Status.Anchored {
					done++
				}
			}
			return done, err
		}, n)
		b.ReportMetric(time.Since(start).Seconds(), "s-to-mark")
		left, err := pendingSubmissions(ctx, mgr.GetClient(), ns)
		if err != nil || len(left) != 0 {
			b.Fatalf("%d pending after the run: %v", len(left), err)
		}
		b.StartTimer()
	}
}

// benchFederation creates the sample Federation in ns and records key in its key
// history, as the key controller does: the key an anchor run signs with. key nil leaves
// its status alone.
func benchFederation(b *testing.B, c client.Client, ns string, key ed25519.PrivateKey) *fv1.Federation {
	b.Helper()
	ctx := context.Background()
	fed := &fv1.Federation{}
	if err := decodeSample("federation_v1alpha1_federation.yaml", fed); err != nil {
		b.Fatal(err)
	}
	fed.Namespace = ns
	if err := c.Create(ctx, fed); err != nil {
		b.Fatal(err)
	}
	if key == nil {
		return fed
	}
	pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		b.Fatal(err)
	}
	fed.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(pemText), Fingerprint: fv1.Hash(protocol.Fingerprint(key.Public().(ed25519.PublicKey)))}}
	if err := c.Status().Update(ctx, fed); err != nil {
		b.Fatal(err)
	}
	return fed
}

// startManager runs a manager on the benchmark's API server with the controllers setup
// adds, until the benchmark ends, and returns once its caches are filled.
func startManager(b *testing.B, setup func(context.Context, ctrl.Manager) error) ctrl.Manager {
	b.Helper()
	ctrl.SetLogger(logr.Discard())
	skip := true // each benchmark runs its own manager with the same controllers
	mgr, err := ctrl.NewManager(benchConfig, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if err := federation.RegisterIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		b.Fatal(err)
	}
	if err := setup(ctx, mgr); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("the manager's caches did not sync")
	}
	return mgr
}

// BenchmarkSubmissionsReconciled measures the Submission controller with default
// settings, in a manager like the real one: 1,000 submissions from 1,000 registered
// operators are created at once, and the clock stops when every one has its verdict.
func BenchmarkSubmissionsReconciled(b *testing.B) {
	const n = 1000
	RegisterTestingT(b) // the operator fixtures assert with Gomega
	c, _ := benchNamespace(b)
	ctx := context.Background()
	startManager(b, func(ctx context.Context, mgr ctrl.Manager) error {
		return Setup(ctx, mgr, Options{LogDir: b.TempDir()})
	})
	for range b.N {
		b.StopTimer()
		_, ns := benchNamespace(b)
		ops := registerAll(b, c, ns, n, "bench")
		subs := make([]client.Object, n)
		for i, op := range ops {
			subs[i] = op.submission(ns, fmt.Sprintf("sub-%d", i), op.next(0, 10))
		}
		b.StartTimer()
		start := time.Now()
		createAll(b, c, n, func(i int) client.Object { return subs[i] }, nil)
		waitAll(b, func() (int, error) {
			var list fv1.SubmissionList
			err := c.List(ctx, &list, client.InNamespace(ns))
			done := 0
			for _, s := range list.Items {
				if meta.IsStatusConditionTrue(s.Status.Conditions, string(fv1.ConditionContinuityVerified)) {
					done++
				}
			}
			return done, err
		}, n)
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "submissions/s")
	}
}

// waitAll polls count every 50ms until it reaches n.
func waitAll(b *testing.B, count func() (int, error), n int) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		done, err := count()
		if err != nil {
			b.Fatal(err)
		}
		if done == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d done after 5 minutes", done, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// registerAll creates n FederationOperators in ns, named op-<i>, with keys seeded from
// label, and waits until every one is Active.
func registerAll(b *testing.B, c client.Client, ns string, n int, label string) []testOperator {
	b.Helper()
	ops := make([]testOperator, n)
	createAll(b, c, n, func(i int) client.Object {
		seed := sha256.Sum256(fmt.Appendf(nil, "%s operator %d", label, i))
		ops[i] = testOperator{key: ed25519.NewKeyFromSeed(seed[:]), org: fmt.Sprintf("%s org %d", label, i)}
		return ops[i].object(ns, fmt.Sprintf("op-%d", i))
	}, nil)
	waitAll(b, func() (int, error) {
		var list fv1.FederationOperatorList
		err := c.List(context.Background(), &list, client.InNamespace(ns))
		active := 0
		for _, o := range list.Items {
			if o.Status.Phase == fv1.PhaseActive {
				active++
			}
		}
		return active, err
	}, n)
	return ops
}
