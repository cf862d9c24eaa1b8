package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// testRetrySchedule replaces the 1m, 5m, ... waits between log uploads, so that the
// outage specs see several retries in seconds.
var testRetrySchedule = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}

var (
	suiteLogs    *Logs          // the controllers' transparency logs, which specs stop and restart
	suiteHistory *history.Store // the manager's history store
	suiteClock   testClock      // the controllers' clock, which specs move forward
	mgrClient    client.Client  // the manager's cached client, with the controllers' indexes
	ctx          context.Context
	cancel       context.CancelFunc
	testEnv      *envtest.Environment
	cfg          *rest.Config  // the manager's: admission.ManagerUsername, in system:masters
	adminCfg     *rest.Config  // a cluster administrator's, whom the admission policy refuses as any user
	k8sClient    client.Client // acts as the manager, as the federation's own HTTP API does
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controllers Suite")
}

// newTestEnv describes an API server with the generated CRDs, on the binaries that
// hack/setup-envtest.sh built (KUBEBUILDER_ASSETS).
func newTestEnv() *envtest.Environment {
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// The controllers run beside etcd and the API server on two cores: give them time
	// when the machine is busy. A spec that waits longer says so itself.
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	ctx, cancel = context.WithCancel(context.TODO())
	Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(BeEmpty(),
		"KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")

	By("starting the API server")
	testEnv = newTestEnv()
	var err error
	adminCfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())

	By("installing the admission policy and acting as the manager it lets through")
	Expect(admission.Install(ctx, adminCfg)).To(Succeed())
	manager, err := testEnv.AddUser(envtest.User{Name: admission.ManagerUsername, Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	cfg = manager.Config()

	k8sClient, err = client.New(cfg, client.Options{Scheme: newScheme()})
	Expect(err).NotTo(HaveOccurred())

	By("starting the controllers")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	Expect(err).NotTo(HaveOccurred())
	// One attempt per Rekor upload, so that an outage shows in seconds, not retries.
	suiteLogs = &Logs{Dir: filepath.Join(os.TempDir(), fmt.Sprintf("cairn-controllers-%d", os.Getpid())),
		Rekor: tlog.RekorOptions{Attempts: 1}}
	DeferCleanup(func() { _ = os.RemoveAll(suiteLogs.Dir) })
	Expect(federation.RegisterIndexes(ctx, mgr.GetFieldIndexer())).To(Succeed())
	// A history store, as a default install has: runs over a Federation's
	// seedFormMaxParticipants make Merkle-form anchors, whose leaves it keeps. Its
	// archiver's first pass finds nothing old, and no second runs while specs move the
	// clock (the history specs run their own).
	Expect(os.MkdirAll(suiteLogs.Dir, 0o700)).To(Succeed())
	suiteHistory, err = history.Open(ctx, history.Options{Driver: history.SQLite, DSN: filepath.Join(suiteLogs.Dir, "history.db")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(suiteHistory.Close)
	Expect(Setup(ctx, mgr, Options{Logs: suiteLogs, RetrySchedule: testRetrySchedule, Now: suiteClock.Now,
		Hooks: Hooks{AnchorCreated: onAnchorCreated}, History: suiteHistory, HistoryInterval: 24 * time.Hour})).To(Succeed())
	mgrClient = mgr.GetClient()
	mgrDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

// mgrDone is closed when the manager has stopped.
var mgrDone chan struct{}

// newScheme returns a scheme with the built-in kinds and the federation.cairn.dev kinds.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(fv1.AddToScheme(s))
	return s
}

var _ = AfterSuite(func() {
	cancel()
	// The manager's watches and requests end before the API server is asked to stop: it
	// waits for the requests in flight.
	Eventually(mgrDone).WithTimeout(time.Minute).Should(BeClosed())
	By("stopping the API server")
	Expect(testEnv.Stop()).To(Succeed())
})

// testClock is the wall clock moved forward by what specs step it, so that a spec can
// make an anchor run due without waiting through its interval.
type testClock struct {
	offset atomic.Int64 // nanoseconds
}

// Now is the controllers' time.
func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Step moves the clock forward by d until the spec ends.
func (c *testClock) Step(d time.Duration) {
	c.offset.Add(int64(d))
	DeferCleanup(func() { c.offset.Add(-int64(d)) })
}

// newNamespace creates a namespace for one spec and deletes it when the spec ends.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { Expect(k8sClient.Delete(ctx, ns)).To(Succeed()) })
	return ns.Name
}
