// Package webhook embeds config/webhook/manifests.yaml, the ValidatingWebhookConfiguration
// that `make manifests` generates from the markers in webhook/admission.go, so that
// `cairn dev` installs the same webhooks `kubectl apply -k config/default` does. AtURL
// points them at a manager outside the cluster, and Install applies the result and waits
// until the API server calls them.
package webhook

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// manifestsYAML is config/webhook/manifests.yaml as controller-gen wrote it.
//
//go:embed manifests.yaml
var manifestsYAML []byte

const (
	// enforceTimeout bounds the wait for the API server to call the webhooks.
	enforceTimeout = time.Minute
	// probeInterval is how often the wait asks again.
	probeInterval = 100 * time.Millisecond
	// probeNamespace exists in every cluster.
	probeNamespace = "default"
	// denied is in every refusal of an admission webhook, and in nothing else.
	denied = "denied the request"
)

// Configuration decodes the embedded configuration. Unknown fields are errors, so a typo
// cannot silently drop a webhook.
func Configuration() (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	doc := bytes.TrimPrefix(bytes.TrimSpace(manifestsYAML), []byte("---\n"))
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(doc, c); err != nil {
		return nil, fmt.Errorf("decode embedded webhook configuration: %w", err)
	}
	if c.Kind != "ValidatingWebhookConfiguration" || len(c.Webhooks) == 0 {
		return nil, fmt.Errorf("decode embedded webhook configuration: kind %q with %d webhooks, want a ValidatingWebhookConfiguration", c.Kind, len(c.Webhooks))
	}
	return c, nil
}

// AtURL returns the embedded configuration with each webhook calling baseURL (such as
// https://127.0.0.1:9443) at its own path instead of the in-cluster Service, and trusting
// the CA certificates of caPEM.
func AtURL(baseURL string, caPEM []byte) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	if !strings.HasPrefix(baseURL, "https://") {
		return nil, fmt.Errorf("webhook URL %q: the API server calls webhooks over https only", baseURL)
	}
	c, err := Configuration()
	if err != nil {
		return nil, err
	}
	for i := range c.Webhooks {
		cc := &c.Webhooks[i].ClientConfig
		if cc.Service == nil || cc.Service.Path == nil {
			return nil, fmt.Errorf("webhook %s names no service path", c.Webhooks[i].Name)
		}
		url := strings.TrimSuffix(baseURL, "/") + *cc.Service.Path
		cc.URL, cc.Service, cc.CABundle = &url, nil, caPEM
	}
	return c, nil
}

// Install creates the configuration of AtURL through cfg, or replaces the one of its name,
// then waits until the API server calls the webhooks: until a server-side dry-run create
// of a FederationOperator whose proof of possession does not verify is denied by them.
// cfg must be a cluster administrator's. Install gives up after a minute, or when ctx
// ends, saying what the last probe got.
func Install(ctx context.Context, cfg *rest.Config, baseURL string, caPEM []byte) error {
	want, err := AtURL(baseURL, caPEM)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return fmt.Errorf("install webhook configuration: %w", err)
	}
	err = c.Create(ctx, want.DeepCopy())
	if apierrors.IsAlreadyExists(err) {
		existing := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err = c.Get(ctx, client.ObjectKeyFromObject(want), existing); err == nil {
			want.ResourceVersion = existing.ResourceVersion
			err = c.Update(ctx, want)
		}
	}
	if err != nil {
		return fmt.Errorf("install webhook configuration %s: %w", want.Name, err)
	}
	return waitEnforced(ctx, c)
}

// Uninstall deletes the configuration, if it exists.
func Uninstall(ctx context.Context, cfg *rest.Config) error {
	want, err := Configuration()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return fmt.Errorf("uninstall webhook configuration: %w", err)
	}
	if err := c.Delete(ctx, want); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("uninstall webhook configuration %s: %w", want.Name, err)
	}
	return nil
}

// waitEnforced polls a dry-run create of probeOperator until a webhook denies it as
// invalid.
func waitEnforced(ctx context.Context, c client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, enforceTimeout)
	defer cancel()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		err := c.Create(ctx, probeOperator(probeNamespace), client.DryRunAll)
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), denied) {
			return nil
		}
		select {
		case <-ctx.Done():
			got := "it was accepted"
			if err != nil {
				got = err.Error()
			}
			return fmt.Errorf("admission webhooks not called: a dry-run create of a FederationOperator with a bad proof of possession was not denied (%s): %w",
				got, ctx.Err())
		case <-tick.C:
		}
	}
}

// probeOperator is a FederationOperator in namespace ns that the schema and the admission
// policy accept and the FederationOperator webhook refuses: its proof of possession is
// not a signature by its key (config/samples' key, whose proof signs another name).
func probeOperator(ns string) *fv1.FederationOperator {
	return &fv1.FederationOperator{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cairn-webhook-probe"},
		Spec: fv1.FederationOperatorSpec{
			OrgName:           "Cairn webhook probe",
			PublicKeyPEM:      "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAQQXh/PafmX6IREAtfxOPzqpKs8FWwV/5t3ZP7AWYSHQ=\n-----END PUBLIC KEY-----\n",
			ProofOfPossession: "EshVESDYJCjNFKYl8G9SiYAgGBcixlNC6swf05Pdmkg054II4jS7867bb2nb63yg2xvKM9cOZjubcX3cDkEaCA==",
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
