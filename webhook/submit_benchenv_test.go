package webhook

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/controllers"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// benchFederation is what the benchmarks run against: a real API server (envtest, with
// the admission policy), a manager running the controllers as the manager's user, and a
// Federation with its key. The Ginkgo suite's BeforeSuite does not run under -run '^$',
// so the benchmarks start their own, once per process.
type benchFederation struct {
	mgr ctrl.Manager
	c   client.Client // uncached, as the manager
	fed types.NamespacedName
}

var (
	benchOnce sync.Once
	benchFed  *benchFederation
	benchErr  error
)

// startBenchFederation returns the process's bench federation, started on first use.
func startBenchFederation(b *testing.B) *benchFederation {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")
	}
	benchOnce.Do(func() { benchFed, benchErr = newBenchFederation() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFed
}

// newBenchFederation starts it; the API server lives until the process ends.
func newBenchFederation() (*benchFederation, error) {
	ctx := context.Background()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	adminCfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	if err := admission.Install(ctx, adminCfg); err != nil {
		return nil, err
	}
	user, err := env.AddUser(envtest.User{Name: admission.ManagerUsername, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	cfg := user.Config()
	cfg.QPS, cfg.Burst = 2000, 4000 // the client's own limiter would be what is measured
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, err
	}
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		return nil, err
	}
	logDir, err := os.MkdirTemp("", "cairn-webhook-bench-")
	if err != nil {
		return nil, err
	}
	if err := federation.RegisterIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	if err := controllers.Setup(ctx, mgr, controllers.Options{LogDir: logDir}); err != nil {
		return nil, err
	}
	go func() { _ = mgr.Start(ctx) }()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-bench-"}}
	if err := c.Create(ctx, ns); err != nil {
		return nil, err
	}
	f := &benchFederation{mgr: mgr, c: c, fed: types.NamespacedName{Namespace: ns.Name, Name: "cairn"}}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cairn"},
		Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, MaxPendingPerOperator: 100000}}
	if err := c.Create(ctx, fed); err != nil {
		return nil, err
	}
	err = waitFor(ctx, func() (bool, error) {
		err := mgr.GetClient().Get(ctx, f.fed, fed)
		return err == nil && fed.Status.PublicKeyPEM != "", client.IgnoreNotFound(err)
	})
	return f, err
}

// server is an API server on the bench federation, without rate limits.
func (f *benchFederation) server() (*Server, error) {
	return New(Options{Client: f.mgr.GetClient(), APIReader: f.mgr.GetAPIReader(), Informers: f.mgr.GetCache(), Federation: f.fed,
		RatePerSecond: -1, OperatorRatePerSecond: -1})
}

// register creates the FederationOperator of a new key, as kubectl apply would, and
// waits until the manager's cache shows it registered.
func (f *benchFederation) register(org string) (ed25519.PrivateKey, error) {
	ctx := context.Background()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	pub := key.Public().(ed25519.PublicKey)
	pemText, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	fo := &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: f.fed.Namespace, Name: operatorObjectName(pub)},
		Spec: fv1.FederationOperatorSpec{OrgName: org, PublicKeyPEM: fv1.PublicKeyPEM(pemText),
			ProofOfPossession: fv1.Signature(protocol.SignRegistration(key, org))}}
	if err := f.c.Create(ctx, fo); err != nil {
		return nil, err
	}
	return key, waitFor(ctx, func() (bool, error) {
		o, err := federation.RegisteredOperator(ctx, f.mgr.GetClient(), f.fed.Namespace, protocol.OperatorID(pub))
		return o != nil && o.Status.Phase == fv1.PhaseActive, err
	})
}

// waitFor polls done every 20 ms for up to a minute.
func waitFor(ctx context.Context, done func() (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("not done within a minute")
}
