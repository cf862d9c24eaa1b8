package install

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/manager"
	"github.com/cairn-dev/cairn/test/testcluster"
)

// rbacKinds are the kinds of config/default that grant the manager its permissions.
var rbacKinds = []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}

// TestManagerRunsUnderItsRenderedRBAC installs, for real, the RBAC objects config/default
// renders, then runs the manager (manager.New, with the rendered Deployment's arguments:
// --namespaces, --federation, leader election, and the webhooks behind the rendered
// webhook configuration)
// as its ServiceAccount, by impersonation, through everything its controllers and
// federation API do: a GitOps registration and one through the API, submissions, an anchor
// the admin asks for, the anchor logged, receipts verified offline, a key rotation, a
// withdrawal, a weekly log snapshot, Events, leader election and an authorized metrics
// scrape. The same ServiceAccount is refused Secrets in other namespaces and cluster-wide.
func TestManagerRunsUnderItsRenderedRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused := captureRefusals(t)
	rendered := render(t, filepath.Join(configDir, "default"))
	hooks := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(only(t, rendered, "ValidatingWebhookConfiguration").Object, hooks); err != nil {
		t.Fatal(err)
	}
	// envtest points the rendered configuration (namespaceSelector and all) at the
	// manager's webhook server, with envtest's own serving certificate.
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(configDir, "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{hooks},
			LocalServingHost:   "127.0.0.1",
		},
	}
	c := startCluster(t, env)
	if err := admission.Install(ctx, c.cfg); err != nil {
		t.Fatal(err)
	}
	sa := only(t, rendered, "ServiceAccount")
	if got := "system:serviceaccount:" + sa.GetNamespace() + ":" + sa.GetName(); got != admission.ManagerUsername || sa.GetNamespace() != managedNamespace {
		t.Fatalf("config/default's ServiceAccount is %s, the admission policy lets through %s", got, admission.ManagerUsername)
	}
	mgrCfg := rest.CopyConfig(c.cfg)
	mgrCfg.Impersonate = rest.ImpersonationConfig{UserName: admission.ManagerUsername,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + managedNamespace, "system:authenticated"}}
	asManager, err := client.New(mgrCfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}

	for _, ns := range []string{managedNamespace, "elsewhere", "monitoring"} {
		if err := c.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	// The API server authorizes with RBAC (envtest passes --authorization-mode=RBAC): with
	// no RBAC objects yet, the manager may read nothing, not even in its own namespace.
	forbidden(t, asManager.List(ctx, &fv1.FederationList{}, client.InNamespace(managedNamespace)), "list Federations before the RBAC is applied")
	for _, obj := range ofKind(rendered, rbacKinds...) {
		if err := c.admin.Create(ctx, obj); err != nil {
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	eventually(ctx, t, nil, "the RoleBinding lets the manager list Federations in "+managedNamespace, func() error {
		return asManager.List(ctx, &fv1.FederationList{}, client.InNamespace(managedNamespace))
	})

	t.Run("refused what it does not need", func(t *testing.T) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "not-the-managers"},
			StringData: map[string]string{"password": "hunter2"}}
		if err := c.admin.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		forbidden(t, asManager.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{}), "get a Secret in another namespace")
		forbidden(t, asManager.List(ctx, &corev1.SecretList{}), "list Secrets cluster-wide")
		forbidden(t, asManager.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system")), "list Secrets in kube-system")
		forbidden(t, asManager.List(ctx, &fv1.FederationList{}), "list Federations cluster-wide")
		forbidden(t, asManager.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "planted"}}),
			"create a Secret in another namespace")
	})

	deployment := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(only(t, rendered, "Deployment").Object, deployment); err != nil {
		t.Fatal(err)
	}
	f := startFederation(ctx, t, c, mgrCfg, deployment, env.WebhookInstallOptions, refused)
	t.Run("federation story", func(t *testing.T) { f.story(ctx, t) })
	t.Run("webhooks", func(t *testing.T) { f.checkWebhooks(ctx, t) })
	t.Run("events and leader election", func(t *testing.T) { f.checkEvents(ctx, t) })
	t.Run("metrics scrape", func(t *testing.T) { f.checkMetrics(ctx, t) })
	f.stop(t)
	refused.check(t)
}

// forbidden fails the test unless err is the API server's 403.
func forbidden(t *testing.T, err error, what string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("the manager's ServiceAccount may %s (got %v), want 403 Forbidden", what, err)
	}
}

// eventually calls check until it returns nil, and fails the test with its last error
// when ctx ends, or at once when abort (nil: none) returns an error.
func eventually(ctx context.Context, t *testing.T, abort func() error, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		if abort != nil {
			if why := abort(); why != nil {
				t.Fatalf("%v before: %s (last: %v)", why, what, err)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freeAddresses returns n distinct loopback addresses that were free a moment ago.
func freeAddresses(t *testing.T, n int) []string { return testcluster.FreeAddresses(t, n) }
