// Package manager builds the federation's controller-runtime manager: its scheme, metrics,
// health and readiness checks, leader election, the controllers it runs, the federation
// API it serves on every replica, and the admission webhooks it serves when asked.
package manager

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	federationv1alpha1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/controllers"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
	"github.com/cairn-dev/cairn/webhook"
)

// LeaderElectionID names the Lease that replicas of the manager compete for.
const LeaderElectionID = "cairn-manager.federation.cairn.dev"

// NewScheme returns a scheme with the built-in kinds and the federation.cairn.dev kinds.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(federationv1alpha1.AddToScheme(s))
	return s
}

// Options configures the manager.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics; "0" disables them.
	MetricsBindAddress string
	// MetricsSecure serves metrics over HTTPS behind Kubernetes authn/authz.
	MetricsSecure bool
	// HealthProbeBindAddress serves /healthz and /readyz.
	HealthProbeBindAddress string
	// LeaderElect makes replicas elect one active manager.
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease; empty means the manager's own namespace.
	LeaderElectionNamespace string
	// LogDir holds the embedded transparency logs (a PersistentVolume in a cluster).
	LogDir string
	// SidecarDir holds the attestation sidecars of submissions (pkg/sidecar), on a volume
	// every replica mounts; empty means LogDir/_sidecars (a name no namespace, so no
	// Federation's log directory, can have).
	SidecarDir string
	// FederationBindAddress serves the federation API (/federation/*) on every replica;
	// "0" disables it.
	FederationBindAddress string
	// Federation is the Federation the API serves, as "namespace/name".
	Federation string
	// Namespaces, when not empty, are the only namespaces the manager watches and caches:
	// its controllers and the API see objects there and nowhere else, so RBAC can grant it
	// Roles in these namespaces instead of a ClusterRole. Empty means every namespace.
	Namespaces []string
	// FederationMaxBodyBytes caps a request body of the federation API.
	FederationMaxBodyBytes int64
	// FederationSidecarQuotaBytes bounds the distinct sidecar bytes one operator's
	// submissions name; FederationSidecarStorageBytes what the sidecar store holds.
	FederationSidecarQuotaBytes, FederationSidecarStorageBytes int64
	// FederationRateLimit is how many requests a second one client address may send the
	// federation API on average (bursts of webhook.DefaultRateBurst); negative: no limit.
	FederationRateLimit float64
	// FederationOperatorRateLimit is how many authenticated requests a second one operator
	// may send on average (bursts of webhook.DefaultOperatorRateBurst); negative: no limit.
	FederationOperatorRateLimit float64
	// FederationRegistrationLimit is how many registrations one client address (an IPv6
	// /64) may make in FederationRegistrationWindow; negative: no limit.
	FederationRegistrationLimit int
	// FederationRegistrationWindow is the sliding window of FederationRegistrationLimit.
	FederationRegistrationWindow time.Duration
	// FederationMaxPendingRegistrations bounds the operators that may wait for approval
	// under a Federation's spec.registration: approval; negative: no bound.
	FederationMaxPendingRegistrations int
	// FederationTrustedProxies are the reverse proxies (CIDRs or addresses) whose
	// X-Forwarded-For names the client address the API's limits count.
	FederationTrustedProxies []string
	// Hooks are called at the steps of an anchor, for fault tests; none in production.
	Hooks controllers.Hooks
	// RetrySchedule is the wait after each failed log upload; nil means
	// controllers.DefaultRetrySchedule. Fault tests shorten it.
	RetrySchedule []time.Duration
	// SnapshotInterval is how often the leader looks whether this week's log snapshot is
	// taken; 0 means federation.DefaultSnapshotInterval. Tests shorten it.
	SnapshotInterval time.Duration
	// Now replaces time.Now as the clock of the controllers and the federation API, for
	// the load test's simulated week; nil in production (no flag sets it).
	Now func() time.Time
	// Webhooks serves the admission webhooks; config/default turns them on.
	Webhooks WebhookOptions
	// History chooses the history store (history.go).
	History HistoryOptions
	// SkipControllerNameValidation lets a process run one manager after another (the
	// load test's runs): controller-runtime refuses a controller name used before in the
	// process. No flag sets it.
	SkipControllerNameValidation bool
}

// WebhookOptions configures the admission webhooks' HTTPS server.
type WebhookOptions struct {
	// Enable serves them. Off by default, so that a manager run outside a cluster (and
	// `cairn dev`) needs no serving certificate.
	Enable bool
	// Host and Port are where they listen; Host "" means every address.
	Host string
	Port int
	// CertDir holds tls.crt and tls.key (in a cluster, cert-manager's Secret).
	CertDir string
}

// NewOptions returns the defaults for a manager running in a cluster.
func NewOptions() *Options {
	return &Options{
		MetricsBindAddress:     ":8443",
		MetricsSecure:          true,
		HealthProbeBindAddress: ":8081",
		LogDir:                 "/var/lib/cairn/tlog",
		Webhooks:               WebhookOptions{Port: 9443, CertDir: "/tmp/k8s-webhook-server/serving-certs"},
		FederationBindAddress:  ":8088",
		Federation:             "cairn-system/cairn",
		FederationMaxBodyBytes: webhook.DefaultMaxBodyBytes,

		FederationSidecarQuotaBytes:   webhook.DefaultOperatorSidecarQuotaBytes,
		FederationSidecarStorageBytes: webhook.DefaultSidecarStorageBytes,
		FederationRateLimit:           webhook.DefaultRatePerSecond,
		FederationOperatorRateLimit:   webhook.DefaultOperatorRatePerSecond,

		FederationRegistrationLimit:       webhook.DefaultRegistrationLimit,
		FederationRegistrationWindow:      webhook.DefaultRegistrationWindow,
		FederationMaxPendingRegistrations: webhook.DefaultMaxPendingRegistrations,

		History: HistoryOptions{Store: history.SQLite, Interval: controllers.DefaultHistoryInterval},
	}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"address the metrics endpoint binds to (:8443 for HTTPS, :8080 for HTTP, 0 to disable)")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"serve metrics over HTTPS, allowing only callers authorized by the API server")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"address the /healthz and /readyz endpoints bind to")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"elect a leader so that only one replica anchors; every replica still serves the API")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"namespace of the leader election Lease (default: the manager's namespace)")
	fs.StringVar(&o.LogDir, "log-dir", o.LogDir,
		"directory of the embedded transparency logs, one per Federation (a persistent volume)")
	fs.StringVar(&o.SidecarDir, "sidecar-dir", o.SidecarDir,
		"directory of the submissions' attestation sidecars, on a volume every replica mounts (default: <log-dir>/_sidecars)")
	fs.BoolVar(&o.Webhooks.Enable, "enable-webhooks", o.Webhooks.Enable,
		"serve the validating admission webhooks of FederationOperators and Submissions (needs a serving certificate)")
	fs.IntVar(&o.Webhooks.Port, "webhook-port", o.Webhooks.Port, "port the admission webhooks listen on")
	fs.StringVar(&o.Webhooks.CertDir, "webhook-cert-dir", o.Webhooks.CertDir,
		"directory holding the admission webhooks' tls.crt and tls.key")
	fs.StringVar(&o.FederationBindAddress, "federation-bind-address", o.FederationBindAddress,
		"address the federation API (/federation/*) binds to on every replica (0 to disable)")
	fs.StringVar(&o.Federation, "federation", o.Federation,
		"the Federation the federation API serves, as namespace/name")
	fs.StringSliceVar(&o.Namespaces, "namespaces", o.Namespaces,
		"comma-separated namespaces the manager watches, the only ones it needs RBAC in (default: every namespace)")
	fs.Int64Var(&o.FederationMaxBodyBytes, "federation-max-body-bytes", o.FederationMaxBodyBytes,
		"largest request body the federation API reads; larger ones are answered 413")
	fs.Int64Var(&o.FederationSidecarQuotaBytes, "federation-sidecar-quota-bytes", o.FederationSidecarQuotaBytes,
		"distinct sidecar bytes one operator's submissions may name, past which submit answers 413 sidecar_quota_exceeded")
	fs.Int64Var(&o.FederationSidecarStorageBytes, "federation-sidecar-storage-bytes", o.FederationSidecarStorageBytes,
		"sidecar bytes the store may hold (size it below the volume's free space), past which submit answers 507 sidecar_storage_full")
	fs.Float64Var(&o.FederationRateLimit, "federation-rate-limit", o.FederationRateLimit,
		"requests a second one client address may send the federation API on average, past which it answers 429 (negative: no limit)")
	fs.Float64Var(&o.FederationOperatorRateLimit, "federation-operator-rate-limit", o.FederationOperatorRateLimit,
		"authenticated requests a second one operator may send the federation API on average, past which it answers 429 (negative: no limit)")
	fs.IntVar(&o.FederationRegistrationLimit, "federation-registration-limit", o.FederationRegistrationLimit,
		"registrations one client address (an IPv6 /64) may make in --federation-registration-window, past which it answers 429 (negative: no limit)")
	fs.DurationVar(&o.FederationRegistrationWindow, "federation-registration-window", o.FederationRegistrationWindow,
		"the sliding window of --federation-registration-limit")
	fs.IntVar(&o.FederationMaxPendingRegistrations, "federation-max-pending-registrations", o.FederationMaxPendingRegistrations,
		"operators that may wait for approval under a Federation's registration: approval, past which registration answers 503 (negative: no bound)")
	fs.StringSliceVar(&o.FederationTrustedProxies, "federation-trusted-proxies", o.FederationTrustedProxies,
		"comma-separated CIDRs or addresses of reverse proxies whose X-Forwarded-For names the client address the API's rate limits count (default: none; the connection's address counts)")
	o.addHistoryFlags(fs)
}

// sidecarDir is SidecarDir, or LogDir/_sidecars by default ("" without a LogDir).
func (o *Options) sidecarDir() string {
	if o.SidecarDir != "" || o.LogDir == "" {
		return o.SidecarDir
	}
	return filepath.Join(o.LogDir, "_sidecars")
}

// federationName parses Federation.
func (o *Options) federationName() (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(o.Federation, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--federation %q: want namespace/name", o.Federation)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// Validate reports options that cannot work together.
func (o *Options) Validate() error {
	var errs []error
	if o.MetricsBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-bind-address %q: %w", o.MetricsBindAddress, err))
		}
	}
	errs = append(errs, o.validateNamespaces()...)
	if err := o.validateHistory(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := net.SplitHostPort(o.HealthProbeBindAddress); err != nil {
		errs = append(errs, fmt.Errorf("--health-probe-bind-address %q: %w", o.HealthProbeBindAddress, err))
	}
	if o.Webhooks.Enable && (o.Webhooks.Port < 1 || o.Webhooks.Port > 65535) {
		errs = append(errs, fmt.Errorf("--webhook-port %d: not a TCP port", o.Webhooks.Port))
	}
	if o.FederationBindAddress != "0" {
		if _, _, err := net.SplitHostPort(o.FederationBindAddress); err != nil {
			errs = append(errs, fmt.Errorf("--federation-bind-address %q: %w", o.FederationBindAddress, err))
		}
		if fed, err := o.federationName(); err != nil {
			errs = append(errs, err)
		} else if len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, fed.Namespace) {
			errs = append(errs, fmt.Errorf("--federation %q: namespace %s is not among --namespaces %s, so the manager would never see it",
				o.Federation, fed.Namespace, strings.Join(o.Namespaces, ",")))
		}
		for _, l := range [...]struct {
			flag  string
			value int64
		}{{"federation-max-body-bytes", o.FederationMaxBodyBytes}, {"federation-sidecar-quota-bytes", o.FederationSidecarQuotaBytes},
			{"federation-sidecar-storage-bytes", o.FederationSidecarStorageBytes}} {
			if l.value <= 0 {
				errs = append(errs, fmt.Errorf("--%s %d: must be positive", l.flag, l.value))
			}
		}
		for _, l := range [...]struct {
			flag  string
			value float64
		}{{"federation-rate-limit", o.FederationRateLimit}, {"federation-operator-rate-limit", o.FederationOperatorRateLimit}} {
			if l.value == 0 || math.IsNaN(l.value) || math.IsInf(l.value, 0) {
				errs = append(errs, fmt.Errorf("--%s %v: want requests a second above 0, or a negative number for no limit", l.flag, l.value))
			}
		}
		errs = append(errs, o.validateRegistration()...)
	}
	return errors.Join(errs...)
}

// validateRegistration reports registration limits out of bounds and trusted proxies
// that are not CIDRs or addresses.
func (o *Options) validateRegistration() []error {
	var errs []error
	if l := o.FederationRegistrationLimit; l == 0 || l > webhook.MaxRegistrationLimit {
		errs = append(errs, fmt.Errorf("--federation-registration-limit %d: want 1 to %d registrations, or a negative number for no limit",
			l, webhook.MaxRegistrationLimit))
	}
	if w := o.FederationRegistrationWindow; w <= 0 || w > webhook.MaxRegistrationWindow {
		errs = append(errs, fmt.Errorf("--federation-registration-window %s: want above 0 and at most %s", w, webhook.MaxRegistrationWindow))
	}
	if o.FederationMaxPendingRegistrations == 0 {
		errs = append(errs, errors.New("--federation-max-pending-registrations 0: want a positive bound, or a negative number for none"))
	}
	if _, err := o.trustedProxies(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// trustedProxies parses FederationTrustedProxies: each a CIDR, or an address standing for
// itself alone.
func (o *Options) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range o.FederationTrustedProxies {
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(v)
		if err != nil || ip.Zone() != "" {
			return nil, fmt.Errorf("--federation-trusted-proxies: %q is not a CIDR or an IP address", v)
		}
		out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
	}
	return out, nil
}

// validateNamespaces reports entries of Namespaces that are not namespace names, or
// given twice.
func (o *Options) validateNamespaces() []error {
	var errs []error
	seen := map[string]bool{}
	for _, ns := range o.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		} else if seen[ns] {
			errs = append(errs, fmt.Errorf("--namespaces: %s is given twice", ns))
		}
		seen[ns] = true
	}
	return errs
}

// cacheOptions restricts the manager's cache, and so every watch and cached read, to
// Namespaces; every namespace when there are none.
func (o *Options) cacheOptions() cache.Options {
	if len(o.Namespaces) == 0 {
		return cache.Options{}
	}
	namespaces := make(map[string]cache.Config, len(o.Namespaces))
	for _, ns := range o.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	return cache.Options{DefaultNamespaces: namespaces}
}

// New builds a manager for cfg with the federation's cache indexes
// (federation.RegisterIndexes), health and readiness checks and every controller.
func New(ctx context.Context, cfg *rest.Config, o *Options) (manager.Manager, error) {
	metrics := metricsserver.Options{
		BindAddress:   o.MetricsBindAddress,
		SecureServing: o.MetricsSecure,
	}
	if o.MetricsSecure {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgrOpts := ctrl.Options{
		Scheme:                        NewScheme(),
		Metrics:                       metrics,
		Cache:                         o.cacheOptions(),
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	}
	if o.Webhooks.Enable {
		mgrOpts.WebhookServer = ctrlwebhook.NewServer(ctrlwebhook.Options{Host: o.Webhooks.Host, Port: o.Webhooks.Port, CertDir: o.Webhooks.CertDir})
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	// One set of indexes for both halves, before either reads through them.
	if err := federation.RegisterIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	store, err := o.openHistory(ctx, mgr)
	if err != nil {
		return nil, err
	}
	if err := controllers.Setup(ctx, mgr, controllers.Options{LogDir: o.LogDir, Hooks: o.Hooks, RetrySchedule: o.RetrySchedule,
		SnapshotInterval: o.SnapshotInterval, Now: o.Now, History: store, HistoryInterval: o.History.Interval}); err != nil {
		return nil, err
	}
	if o.Webhooks.Enable {
		if err := webhook.SetupAdmissionWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if err := addFederationAPI(mgr, o, store); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	return mgr, nil
}

// addFederationAPI adds the federation API to mgr, unless o disables it. It runs on every
// replica, not only the leader.
func addFederationAPI(mgr manager.Manager, o *Options, store *history.Store) error {
	if o.FederationBindAddress == "0" {
		return nil
	}
	fed, err := o.federationName()
	if err != nil {
		return err
	}
	proxies, err := o.trustedProxies()
	if err != nil {
		return err
	}
	srv, err := webhook.New(webhook.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Federation: fed,
		MaxBodyBytes: o.FederationMaxBodyBytes, LogDir: o.LogDir, SidecarDir: o.sidecarDir(), Now: o.Now,
		OperatorSidecarQuotaBytes: o.FederationSidecarQuotaBytes, SidecarStorageBytes: o.FederationSidecarStorageBytes,
		RatePerSecond: o.FederationRateLimit, OperatorRatePerSecond: o.FederationOperatorRateLimit,
		RegistrationLimit: o.FederationRegistrationLimit, RegistrationWindow: o.FederationRegistrationWindow,
		MaxPendingRegistrations: o.FederationMaxPendingRegistrations, TrustedProxies: proxies, History: store})
	if err != nil {
		return err
	}
	if err := mgr.Add(srv.Runnable(o.FederationBindAddress)); err != nil {
		return fmt.Errorf("add the federation API: %w", err)
	}
	return nil
}
