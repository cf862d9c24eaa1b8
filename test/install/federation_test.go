package install

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/manager"
)

// managerRun is a manager running in the test: done is closed once Start returned err.
type managerRun struct {
	done   chan struct{}
	err    error
	cancel context.CancelFunc
	// reported and gaveUp keep a second stop from reporting again.
	reported, gaveUp bool
}

// federation is the Federation cairn in the managed namespace, served by a manager that
// runs as config/default's ServiceAccount.
type federation struct {
	c       *cluster
	run     *managerRun
	api     string // the federation API's base URL
	metrics string // the metrics endpoint's address (HTTPS)
	fed     *fv1.Federation
	acme    *organization // registered through GitOps, by story
	refused *refusals
}

// startFederation runs the manager with the arguments of the Deployment config/default
// renders, where they do not name this machine's ports and directories, with mgrCfg,
// until the test ends; creates the Federation those arguments serve; and returns once the
// federation API answers.
func startFederation(ctx context.Context, t *testing.T, c *cluster, mgrCfg *rest.Config, deployment *appsv1.Deployment,
	hooks envtest.WebhookInstallOptions, refused *refusals) *federation {
	t.Helper()
	addrs := freeAddresses(t, 3)
	f := &federation{c: c, api: "http://" + addrs[0], metrics: addrs[1], refused: refused}
	o := managerOptions(t, deployment, "--federation-bind-address="+addrs[0], "--metrics-bind-address="+addrs[1],
		"--health-probe-bind-address="+addrs[2], "--log-dir="+t.TempDir(),
		// Outside a pod the manager cannot read its namespace from the token's directory.
		"--leader-election-namespace="+deployment.Namespace,
		fmt.Sprintf("--webhook-port=%d", hooks.LocalServingPort), "--webhook-cert-dir="+hooks.LocalServingCertDir)
	o.Webhooks.Host = hooks.LocalServingHost
	o.SnapshotInterval = 200 * time.Millisecond
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !o.LeaderElect || !o.Webhooks.Enable || len(o.Namespaces) == 0 {
		t.Fatalf("the Deployment runs the manager with leader election %v, webhooks %v, namespaces %v; want all three",
			o.LeaderElect, o.Webhooks.Enable, o.Namespaces)
	}
	ns, name, _ := strings.Cut(o.Federation, "/")
	f.fed = &fv1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: fv1.FederationSpec{
		AnchorInterval: metav1.Duration{Duration: 24 * time.Hour}, MinParticipants: 1,
		TransparencyLog: fv1.TransparencyLog{Type: fv1.TransparencyLogEmbedded}, PublicURL: f.api}}

	mgr, err := manager.New(ctx, mgrCfg, o)
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	f.run = &managerRun{done: make(chan struct{}), cancel: cancel}
	go func() {
		f.run.err = mgr.Start(mgrCtx)
		close(f.run.done)
	}()
	t.Cleanup(func() { f.stop(t) })
	// A Federation is created through the manager's webhook (one per namespace), so once
	// the manager serves it, as a cluster's GitOps tool applies it after the install.
	f.eventually(ctx, t, "the Federation is created through the webhooks", func() error {
		if err := c.admin.Create(ctx, f.fed.DeepCopy()); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	f.eventually(ctx, t, "the federation API answers /federation/status", func() error {
		_, err := f.anonymous(t).Status(ctx)
		return err
	})
	return f
}

// managerOptions parses the manager container's arguments in deployment, with the
// variables of its environment that come from the pod's namespace expanded as the kubelet
// would, then extra; flags of the root command (--zap-*) are skipped.
func managerOptions(t *testing.T, deployment *appsv1.Deployment, extra ...string) *manager.Options {
	t.Helper()
	container := deployment.Spec.Template.Spec.Containers[0]
	var expand []string
	for _, env := range container.Env {
		if env.ValueFrom != nil && env.ValueFrom.FieldRef != nil && env.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			expand = append(expand, "$("+env.Name+")", deployment.Namespace)
		}
	}
	args := slices.Clone(container.Args)
	for i := range args {
		args[i] = strings.NewReplacer(expand...).Replace(args[i])
	}
	o := manager.NewOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	o.AddFlags(fs)
	if err := fs.Parse(append(args, extra...)); err != nil {
		t.Fatalf("the Deployment's arguments %q: %v", container.Args, err)
	}
	return o
}

// eventually is eventually that gives up as soon as the manager has stopped or was
// refused something: a refusal it retries (the leader election's, an informer's) would
// otherwise only show as a timeout.
func (f *federation) eventually(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	eventually(ctx, t, func() error {
		select {
		case <-f.run.done:
			return fmt.Errorf("the manager stopped (%w)", f.run.err)
		default:
		}
		return f.refused.err()
	}, what, check)
}

// stopTimeout bounds the wait for the manager to stop. A manager whose caches never
// synced (refused a list) can take minutes to notice its context ended.
const stopTimeout = 30 * time.Second

// stop stops the manager and fails the test if it had failed or does not stop. Calling
// it again does nothing more.
func (f *federation) stop(t *testing.T) {
	t.Helper()
	f.run.cancel()
	select {
	case <-f.run.done:
	case <-time.After(stopTimeout):
		if !f.run.gaveUp {
			t.Errorf("the manager did not stop within %s of its context's end", stopTimeout)
		}
		f.run.gaveUp = true
		return
	}
	if f.run.err != nil && !f.run.reported {
		t.Errorf("the manager returned %v", f.run.err)
	}
	f.run.reported = true
}

// get fetches path of the federation API without credentials and returns the status.
func (f *federation) get(ctx context.Context, t *testing.T, path string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.api+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// secretValue reads key of the Secret name in the managed namespace, as the
// administrator.
func (f *federation) secretValue(ctx context.Context, t *testing.T, name, key string) string {
	t.Helper()
	var s corev1.Secret
	if err := f.c.admin.Get(ctx, client.ObjectKey{Namespace: managedNamespace, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(s.Data[key]))
}
