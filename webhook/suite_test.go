package webhook

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/controllers"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// The suite runs the real API server (with the admission policy), the real controllers on
// a manager acting as the manager's ServiceAccount, and the embedded transparency log.
var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	mgr       ctrl.Manager  // runs the controllers
	replica   ctrl.Manager  // a second manager on the same API server: its own cache, no controllers
	k8sClient client.Client // uncached, acting as the manager
	fedKey    types.NamespacedName
	logDir    string // the controllers' embedded logs
	// suiteHistory is the controllers' history store, where Merkle-form anchors' leaves are.
	suiteHistory *history.Store
)

func TestWebhook(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Federation API Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	ctx, cancel = context.WithCancel(context.TODO())
	Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(BeEmpty(),
		"KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh)")

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	adminCfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(admission.Install(ctx, adminCfg)).To(Succeed())
	user, err := testEnv.AddUser(envtest.User{Name: admission.ManagerUsername, Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	cfg := user.Config()
	cfg.QPS = -1 // as ctrl.GetConfig gives `cairn manager`: no client-side throttling
	k8sClient, err = client.New(cfg, client.Options{Scheme: newScheme()})
	Expect(err).NotTo(HaveOccurred())

	// TestAdmissionWebhooks, in the same test binary, runs the controllers on a manager of
	// its own: their names are taken there, so this manager skips controller-runtime's
	// process-wide check that a controller's name is unique.
	skipNameCheck := true
	mgr, err = ctrl.NewManager(cfg, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skipNameCheck}})
	Expect(err).NotTo(HaveOccurred())
	logDir = filepath.Join(os.TempDir(), fmt.Sprintf("cairn-webhook-%d", os.Getpid()))
	DeferCleanup(func() { _ = os.RemoveAll(logDir) })
	Expect(federation.RegisterIndexes(ctx, mgr.GetFieldIndexer())).To(Succeed())
	Expect(os.MkdirAll(logDir, 0o700)).To(Succeed())
	suiteHistory, err = history.Open(ctx, history.Options{Driver: history.SQLite, DSN: filepath.Join(logDir, "history.db")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(suiteHistory.Close)
	// Its archiver's first pass finds nothing old, and no second runs in the suite.
	Expect(controllers.Setup(ctx, mgr, controllers.Options{LogDir: logDir, History: suiteHistory, HistoryInterval: 24 * time.Hour})).To(Succeed())
	replica, err = ctrl.NewManager(cfg, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	Expect(err).NotTo(HaveOccurred())
	Expect(federation.RegisterIndexes(ctx, replica.GetFieldIndexer())).To(Succeed())
	for _, m := range []ctrl.Manager{mgr, replica} {
		managers.Add(1)
		go func() {
			defer GinkgoRecover()
			defer managers.Done()
			Expect(m.Start(ctx)).To(Succeed())
		}()
	}

	By("creating the Federation the API serves and waiting for its key")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cairn-webhook-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	fedKey = types.NamespacedName{Namespace: ns.Name, Name: "cairn"}
	fed := &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: fedKey.Namespace, Name: fedKey.Name},
		Spec: fv1.FederationSpec{TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}}}
	Expect(k8sClient.Create(ctx, fed)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(mgr.GetClient().Get(ctx, fedKey, fed)).To(Succeed())
		g.Expect(fed.Status.PublicKeyPEM).NotTo(BeEmpty())
	}).Should(Succeed())
})

// managers counts the managers still running.
var managers sync.WaitGroup

var _ = AfterSuite(func() {
	cancel()
	// The managers' watches and requests end before the API server is asked to stop: it
	// waits for the requests in flight, past envtest's patience.
	stopped := make(chan struct{})
	go func() { managers.Wait(); close(stopped) }()
	Eventually(stopped).WithTimeout(time.Minute).Should(BeClosed())
	Expect(testEnv.Stop()).To(Succeed())
})

// newServer returns a Server on the suite's manager, which runs the controllers, with o's
// settings over the suite's.
func newServer(o Options) *Server {
	GinkgoHelper()
	return serverOn(mgr, o)
}

// newReplica returns a Server on the second manager: another replica, with its own cache,
// sharing only the API server with newServer's.
func newReplica(o Options) *Server {
	GinkgoHelper()
	return serverOn(replica, o)
}

// serverOn returns a Server on m with o's settings over the suite's.
func serverOn(m ctrl.Manager, o Options) *Server {
	GinkgoHelper()
	o.Client, o.APIReader, o.Informers, o.Federation = m.GetClient(), m.GetAPIReader(), m.GetCache(), fedKey
	if o.RatePerSecond == 0 {
		o.RatePerSecond = -1
	}
	if o.RegistrationLimit == 0 {
		o.RegistrationLimit = -1 // the specs register many operators from httptest's one address
	}
	s, err := New(o)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// answer is one response: its status, headers and JSON body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// do sends a request to s and decodes the JSON answer.
func do(s http.Handler, method, path string, body []byte) answer {
	GinkgoHelper()
	return doAuth(s, method, path, "", body)
}

// challenge gets a challenge from s.
func challenge(s http.Handler) string {
	GinkgoHelper()
	a := do(s, http.MethodGet, "/federation/register/challenge", nil)
	Expect(a.status).To(Equal(http.StatusOK), string(a.raw))
	nonce, _ := a.body["nonce"].(string)
	return nonce
}

// registrant is an organization with a key.
type registrant struct {
	key ed25519.PrivateKey
	org string
}

func newRegistrant(org string) registrant {
	_, key, err := ed25519.GenerateKey(nil)
	Expect(err).NotTo(HaveOccurred())
	return registrant{key: key, org: org}
}

// body is the registration of r with nonce, signed as an honest client signs it.
func (r registrant) body(nonce string) []byte {
	GinkgoHelper()
	pemText, err := marshalPub(r.key)
	Expect(err).NotTo(HaveOccurred())
	sig := signRaw(r.key, nonce)
	rn, err := protocol.NewRename(r.key, protocol.OperatorID(r.key.Public().(ed25519.PublicKey)), r.org, "ops@example.org", time.Now())
	Expect(err).NotTo(HaveOccurred())
	b, err := json.Marshal(registerRequest{PublicKeyPEM: pemText, OrgName: r.org, ContactEmail: "ops@example.org",
		Nonce: nonce, NonceSignature: sig, ProofOfPossession: proofOf(r.key, r.org), RenameAt: rn.At, RenameSignature: rn.Signature})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// newScheme returns a scheme with the built-in kinds and the federation.cairn.dev kinds.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(fv1.AddToScheme(s))
	return s
}
