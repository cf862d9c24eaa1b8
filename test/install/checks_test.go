package install

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// checkWebhooks: the admission webhooks, which read the namespace's operators as the
// manager, refuse a second GitOps registration of Acme's key; outside the managed
// namespace the API server does not call them at all (the manager could not read there,
// and with failurePolicy Fail every write would be refused), so the same object is
// accepted there.
func (f *federation) checkWebhooks(ctx context.Context, t *testing.T) {
	if f.acme == nil {
		t.Skip("the story did not register Acme")
	}
	err := f.c.admin.Create(ctx, f.acme.registration(t, managedNamespace, "acme-again"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), fv1.ReasonDuplicateKey) {
		t.Errorf("a second registration of Acme's key in %s: %v, want the webhook's %s", managedNamespace, err, fv1.ReasonDuplicateKey)
	}
	if err := f.c.admin.Create(ctx, f.acme.registration(t, "elsewhere", "acme")); err != nil {
		t.Errorf("a FederationOperator outside the managed namespace: %v, want it accepted without the webhooks", err)
	}
}

// checkEvents: the controllers recorded Events about the Federation (events.k8s.io), and
// the elected replica recorded its election (a core Event, which leader election still
// writes through the core API): each needs its own RBAC rule.
func (f *federation) checkEvents(ctx context.Context, t *testing.T) {
	// Events are written in the background, within a second or so of what they report.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	f.eventually(ctx, t, "an events.k8s.io Event about the Federation", func() error {
		var events eventsv1.EventList
		if err := f.c.admin.List(ctx, &events, client.InNamespace(managedNamespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Federation" && e.Regarding.Name == f.fed.Name {
				return nil
			}
		}
		return fmt.Errorf("%d events, none about the Federation", len(events.Items))
	})
	f.eventually(ctx, t, "a core Event of the leader election", func() error {
		var events corev1.EventList
		if err := f.c.admin.List(ctx, &events, client.InNamespace(managedNamespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "LeaderElection" && strings.Contains(e.Message, "became leader") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none of the leader election", len(events.Items))
	})
}

// checkMetrics: the ServiceAccount config/prometheus binds to cairn-metrics-reader
// scrapes /metrics with its token, which the manager has the API server review (the
// manager's one cluster-wide grant); a ServiceAccount without the binding is refused.
func (f *federation) checkMetrics(ctx context.Context, t *testing.T) {
	binding := &rbacv1.ClusterRoleBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(
		only(t, render(t, filepath.Join(configDir, "prometheus")), "ClusterRoleBinding").Object, binding); err != nil {
		t.Fatal(err)
	}
	if err := f.c.admin.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	prometheus := binding.Subjects[0]
	if code, body := f.scrape(ctx, t, f.token(ctx, t, prometheus.Namespace, prometheus.Name)); code != http.StatusOK || !strings.Contains(body, "controller_runtime_reconcile_total") {
		t.Errorf("GET /metrics as %s/%s: %d %.200s, want 200 and the metrics", prometheus.Namespace, prometheus.Name, code, body)
	}
	if code, body := f.scrape(ctx, t, f.token(ctx, t, prometheus.Namespace, "stranger")); code != http.StatusForbidden {
		t.Errorf("GET /metrics as a ServiceAccount without the binding: %d %.200s, want 403", code, body)
	}
}

// token creates the ServiceAccount namespace/name if it is missing and returns a token
// the API server issued it.
func (f *federation) token(ctx context.Context, t *testing.T, namespace, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := f.c.admin.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(f.c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// scrape gets /metrics with token and returns the status and body.
func (f *federation) scrape(ctx context.Context, t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+f.metrics+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// The manager's metrics certificate is self-signed, made at start (as in a cluster).
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed serving cert
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
