// Package dev holds the developer's commands: `cairn dev`, the whole system on one
// machine, and `cairn demo`, the story told against it.
package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/config/admission"
	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/serve"
	"github.com/cairn-dev/cairn/internal/devenv"
	"github.com/cairn-dev/cairn/manager"
)

// devOptions configures `cairn dev`.
type devOptions struct {
	env     devenv.Options
	manager *manager.Options
	// serveAddr is where the local chain service listens; "0" disables it.
	serveAddr string
	// apiKey, when set, is required by the chain service's /api routes.
	apiKey string
	// createFederation creates devFederation when absent (dev_federation.go).
	createFederation bool
	// demo runs the demo once ready, then stops.
	demo bool
	// witnessAddrs are where the dev witnesses listen (dev_witnesses.go); none runs none.
	witnessAddrs []string
}

func newDevOptions() *devOptions {
	m := manager.NewOptions()
	m.MetricsBindAddress = "127.0.0.1:8082" // 8080 is the chain service's, as for cairn serve
	m.MetricsSecure = false
	m.HealthProbeBindAddress = "127.0.0.1:8081"
	m.LogDir = "" // <dir>/tlog unless --log-dir says otherwise
	m.FederationBindAddress = "127.0.0.1:8088"
	m.Federation = devFederation.Namespace + "/" + devFederation.Name
	// On 127.0.0.1, on a free port, with certificates made at each start (dev_webhooks.go).
	m.Webhooks = manager.WebhookOptions{Enable: true}
	return &devOptions{env: devenv.Options{Dir: ".cairn-dev"}, manager: m, serveAddr: "127.0.0.1:8080",
		witnessAddrs: []string{"127.0.0.1:8480", "127.0.0.1:8481"}}
}

func (o *devOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.env.Dir, "dir", o.env.Dir, "state directory: etcd data and the kubeconfig")
	fs.StringVar(&o.env.AssetsDir, "assets", o.env.AssetsDir, "directory holding kube-apiserver, etcd and kubectl (printed by hack/setup-envtest.sh)")
	fs.BoolVar(&o.env.Fresh, "fresh", o.env.Fresh, "delete the stored cluster state before starting")
	fs.StringVar(&o.serveAddr, "serve-addr", o.serveAddr, "address of the local chain service (cairn serve); 0 disables it")
	fs.StringVar(&o.apiKey, "api-key", "", "API key the chain service's /api routes require (prefer CAIRN_API_KEY)")
	fs.BoolVar(&o.createFederation, "create-federation", true, "create the Federation "+devFederation.String()+" when absent; false to apply your own (a restore)")
	fs.StringSliceVar(&o.witnessAddrs, "witness-addrs", o.witnessAddrs, "addresses of the dev witnesses that cosign the log's checkpoints (cairn witness); empty runs none")
	o.manager.AddFlags(cmd.Flags())
	o.addDemoFlags(cmd)
}

func (o *devOptions) validate() error {
	if o.env.AssetsDir == "" {
		return errors.New("--assets (or KUBEBUILDER_ASSETS) is required: run `make dev`, or pass the directory hack/setup-envtest.sh prints")
	}
	if _, _, err := net.SplitHostPort(o.serveAddr); err != nil && o.serveAddr != "0" {
		return fmt.Errorf("--serve-addr %q: want host:port, or 0 to run no chain service", o.serveAddr)
	}
	if o.serveAddr != "0" {
		if err := serve.CheckListen("--serve-addr", o.serveAddr, o.apiKey); err != nil {
			return err
		}
	}
	if o.demo && o.manager.FederationBindAddress == "0" {
		return errors.New("--demo needs the federation API: --federation-bind-address must not be 0")
	}
	return o.manager.Validate()
}

// NewDevCommand returns `cairn dev`.
func NewDevCommand() *cobra.Command {
	opts := newDevOptions()
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the whole system locally: control plane, CRDs, manager and chain service",
		Long: `Run a local Kubernetes control plane (etcd and kube-apiserver built by
hack/setup-envtest.sh), install the federation CRDs and the admission policy of
config/admission, write an administrator's kubeconfig to <dir>/kubeconfig and run the
manager until interrupted. The manager runs as ` + admission.ManagerUsername + `,
the one user the policy lets create CrossAnchors and Submissions and write status; the
kubeconfig's administrator cannot.

The manager serves the admission webhooks of config/webhook on 127.0.0.1 (on a free port
unless --webhook-port names one), with a CA and a serving certificate made at each start
in <dir>/webhook-certs (--webhook-cert-dir), and the webhook configuration calls it there:
kubectl apply of a FederationOperator or Submission the controllers would refuse is
refused at once. --enable-webhooks=false removes that configuration instead.

Beside them runs the local chain service (cairn serve) on --serve-addr, over
<dir>/chain.db, with an HMAC secret (<dir>/chain-secret.hex) and an operator key that
signs exports (<dir>/operator-key.pem), both made on the first start and kept.

Once ready, <dir>/dev.json says where the federation API answers, for cairn demo.
--demo runs the demo then (its logs go to <dir>/dev.log) and stops; the exit status is
the demo's. --fresh deletes the cluster state, the embedded log and the demo's state.`,
		Args: cmdutil.NoArgs,
		Example: `  # Run the whole system with the binaries hack/setup-envtest.sh fetched (what make dev does)
  cairn dev --assets "$(hack/setup-envtest.sh)"

  # Start over, run the demo once the system is ready, then stop
  cairn dev --assets "$(hack/setup-envtest.sh)" --fresh --demo`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, opts) },
	}
	opts.addFlags(cmd)
	cmdutil.AddClusterFlags(cmd)
	opts.logDemoToFile(cmd)
	return cmd
}

// Complete makes the webhooks' certificate directory and port concrete.
func (o *devOptions) Complete(*cobra.Command, []string) error { return o.completeWebhooks() }

// Validate checks the flags, as a usage error.
func (o *devOptions) Validate() error {
	if err := o.validate(); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run runs the local system until the command's context ends.
func (o *devOptions) Run(cmd *cobra.Command) error {
	return runDev(cmd.Context(), cmd.OutOrStdout(), o)
}

// runDev runs the local system until ctx ends, then stops the manager and the control plane.
func runDev(ctx context.Context, out io.Writer, o *devOptions) (err error) {
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(out, "cairn dev: "+format+"\n", args...) }

	release, err := lockDevDir(o.env.Dir)
	if err != nil {
		return err
	}
	defer release()
	if o.env.Fresh {
		if err := o.startOver(); err != nil {
			return err
		}
	}
	say("starting control plane from %s", o.env.AssetsDir)
	env, err := devenv.Start(ctx, o.env)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) { // Start stopped what it had started
			say("interrupted while starting; stopped")
			return nil
		}
		return err
	}
	defer func() {
		say("stopping control plane")
		stopErr := env.Stop()
		if stopErr == nil {
			say("stopped")
		}
		err = errors.Join(err, stopErr)
	}()

	webhookCA, err := prepareDevWebhooks(o)
	if err != nil {
		return err
	}
	if o.manager.LogDir == "" {
		o.manager.LogDir = filepath.Join(o.env.Dir, "tlog")
	}
	mgr, err := manager.New(ctx, env.ManagerConfig, o.manager)
	if err != nil {
		return err
	}
	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()

	probe := "http://" + serve.DialAddress(o.manager.HealthProbeBindAddress) + "/readyz"
	waitFor := []string{probe}
	if fedURL := o.federationURL(); fedURL != "" { // it listens a moment after /readyz answers
		waitFor = append(waitFor, fedURL+"/federation/openapi.json")
	}
	for _, url := range waitFor {
		if err := cmdutil.WaitReady(ctx, url, done); err != nil {
			if ctx.Err() == nil { // the manager failed; done is drained
				return err
			}
			say("interrupted before ready; stopping manager")
			stopManager()
			return <-done
		}
	}
	// The webhooks first: a configuration a previous run left points at its port, and the
	// Federation's own webhook would refuse the create below on a dead address.
	if err := installDevWebhooks(ctx, env.Config, o, webhookCA); err != nil {
		stopManager()
		return errors.Join(fmt.Errorf("install the admission webhooks: %w", err), <-done)
	}
	created, err := o.devFederation(ctx, env.Config, say)
	if err != nil {
		stopManager()
		return errors.Join(fmt.Errorf("create the default Federation: %w", err), <-done)
	}
	if created {
		say("federation     created %s/%s with the embedded log in %s", devFederation.Namespace, devFederation.Name, o.manager.LogDir)
	}
	stopWitnesses, err := o.startDevWitnesses(ctx, env.Config, say)
	if err != nil {
		stopManager()
		return errors.Join(fmt.Errorf("start the witnesses: %w", err), <-done)
	}
	defer func() { err = errors.Join(err, stopWitnesses()) }()
	chainURL, stopChain := startDevChain(ctx, o, say)
	defer func() {
		if chainURL != "" {
			say("stopping chain service")
		}
		err = errors.Join(err, stopChain())
	}()
	say("control plane  %s (etcd data in %s)", env.URL(), o.env.Dir)
	say("kubeconfig     %s (an administrator's)", env.Kubeconfig)
	say("               kubectl --kubeconfig %s get federationoperators", env.Kubeconfig)
	say("CRDs           %s", strings.Join(env.CRDs, ", "))
	say("admission      only the manager (%s) creates CrossAnchors and Submissions and writes status; records go only with their Federation or namespace", admission.ManagerUsername)
	o.sayWebhooks(say)
	say("manager        %s", probe)
	if fedURL := o.federationURL(); fedURL != "" {
		say("federation API %s/federation/status (docs /federation/openapi.json)", fedURL)
		say("public page    %s/ (operators, anchors, the log; drop a receipt to check it)", fedURL)
	}
	if o.manager.MetricsBindAddress != "0" {
		say("metrics        http://%s/metrics", serve.DialAddress(o.manager.MetricsBindAddress))
	}
	if chainURL != "" {
		say("chain service  %s (API docs %s/docs, chain %s)", chainURL, chainURL, filepath.Join(o.env.Dir, devenv.ChainDBFile))
	}
	removeState, err := o.writeDevState(devState{APIServer: env.URL(), Kubeconfig: env.Kubeconfig, ChainService: chainURL, Manager: probe})
	if err != nil {
		stopManager()
		return errors.Join(err, <-done)
	}
	defer func() { err = errors.Join(err, removeState()) }()

	var demoErr error
	if o.demo {
		say("ready; running the demo (again later: cairn demo --dir %s, or make demo)", o.env.Dir)
		if t, err := o.demoTarget(env.Config, env.Kubeconfig); err != nil {
			demoErr = err
		} else {
			demoErr = runDemo(ctx, out, t)
		}
	} else {
		say("demo           make demo (or cairn demo --dir %s): three organizations, one federation", o.env.Dir)
		say("ready; press Ctrl-C to stop")
		select {
		case err := <-done:
			return fmt.Errorf("manager stopped: %w", err)
		case <-ctx.Done():
		}
	}
	say("stopping manager")
	stopManager()
	return errors.Join(demoErr, <-done)
}

// devFederation is the Federation cairn dev creates when absent: the embedded log and
// the defaults (6h interval), so registrations applied with kubectl go through.
var devFederation = types.NamespacedName{Namespace: "default", Name: "cairn"}

// ensureDevFederation creates devFederation unless it exists, with publicURL (the
// federation API's URL, "" when it is off), so that receipts name where its log is read.
// A Federation without a publicURL gets this one. It reports whether it created one.
func ensureDevFederation(ctx context.Context, cfg *rest.Config, publicURL string) (bool, error) {
	c, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return false, err
	}
	fed := &federationv1alpha1.Federation{ObjectMeta: metav1.ObjectMeta{Namespace: devFederation.Namespace, Name: devFederation.Name},
		Spec: federationv1alpha1.FederationSpec{PublicURL: publicURL,
			TransparencyLog: federationv1alpha1.TransparencyLog{Type: federationv1alpha1.TransparencyLogEmbedded}}}
	err = c.Create(ctx, fed)
	if !apierrors.IsAlreadyExists(err) {
		return err == nil, err
	}
	if err := c.Get(ctx, devFederation, fed); err != nil || fed.Spec.PublicURL != "" || publicURL == "" {
		return false, err
	}
	fed.Spec.PublicURL = publicURL
	return false, c.Update(ctx, fed)
}

// federationURL is the federation API's base URL, "" when it is off.
func (o *devOptions) federationURL() string {
	if o.manager.FederationBindAddress == "0" {
		return ""
	}
	return "http://" + serve.DialAddress(o.manager.FederationBindAddress)
}

// startDevChain starts the local chain service on o.serveAddr over the chain kept in the
// state directory. It returns the service's URL and a function that stops it and waits.
// The URL is empty when the service is disabled, or could not start (the port is taken,
// say): cairn dev then runs on without it and prints why.
func startDevChain(ctx context.Context, o *devOptions, say func(string, ...any)) (string, func() error) {
	none := func() error { return nil }
	if o.serveAddr == "0" {
		return "", none
	}
	c, err := devenv.LoadChain(o.env.Dir)
	if err != nil {
		say("chain service  not started: %v", err)
		return "", none
	}
	hosts, err := serve.AllowedHosts(o.serveAddr, nil)
	if err != nil {
		say("chain service  not started: %v", err)
		return "", none
	}
	svc, err := serve.OpenChainService(c.DB, c.Secret, api.Options{SigningKey: c.Key, APIKey: o.apiKey, AllowedHosts: hosts, DefaultRegion: serve.DefaultRegion})
	if err != nil {
		say("chain service  not started: %v", err)
		return "", none
	}
	ctx, cancel := context.WithCancel(ctx)
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, o.serveAddr, func(url string) { urls <- url }) }()
	select {
	case url := <-urls:
		return url, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		say("chain service  not started: %v (pass --serve-addr to use another address)", err)
		return "", none
	}
}
