package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/history"
	"github.com/cairn-dev/cairn/internal/version"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes caps a request body: 256 MiB.
	DefaultMaxBodyBytes = 256 << 20
	// DefaultRatePerSecond is how many requests a second one client address may send on
	// average, and DefaultRateBurst how many at once.
	DefaultRatePerSecond = 20
	DefaultRateBurst     = 40
	// DefaultOperatorRatePerSecond is how many authenticated requests a second one
	// operator may send on average, and DefaultOperatorRateBurst how many at once.
	DefaultOperatorRatePerSecond = 5
	DefaultOperatorRateBurst     = 20
	// DefaultRegisterTimeout is how long POST /federation/register waits for the
	// controller to register and log the operator.
	DefaultRegisterTimeout = 30 * time.Second
	// DefaultReadHeaderTimeout bounds the reading of a request's headers: a slowloris
	// client sending them a byte at a time is cut off after it.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the reading of a whole request, body included: generous,
	// as a submission may be a 256 MiB export on a slow link.
	DefaultReadTimeout = 10 * time.Minute
	// DefaultWriteTimeout bounds a request from the end of its headers to the end of its
	// answer: the read, plus the wait for the controller (DefaultRegisterTimeout, an
	// anchor run's).
	DefaultWriteTimeout = 15 * time.Minute
	// DefaultIdleTimeout is how long a keep-alive connection may wait for its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultCollectInterval is how often a running server deletes expired challenge
	// records.
	DefaultCollectInterval = time.Minute
	// DefaultMaxPendingRegistrations is how many operators may wait for approval: at
	// about 3 KB each in etcd, 3 MB.
	DefaultMaxPendingRegistrations = 1000
)

// Options configures a Server.
type Options struct {
	// Client reads through the manager's cache (with the controllers' indexes) and writes
	// to the API server. Required.
	Client client.Client
	// APIReader reads from the API server, uncached: the used-challenge records, which
	// the manager does not cache. Required.
	APIReader client.Reader
	// History is the federation's history store, where finished records move out of
	// etcd; nil when they stay objects.
	History *history.Store
	// Informers are the manager's cache's (mgr.GetCache()): their events keep the counts
	// GET /federation/status shows, so that no request counts the store (kept.go).
	// Required.
	Informers cache.Informers
	// VerdictCacheEntries and VerdictCacheBytes bound the verdicts remembered of anchors
	// and of participants' submissions (federation.VerdictCache); 0 means
	// federation.DefaultVerdictEntries and federation.DefaultVerdictBytes.
	VerdictCacheEntries int
	VerdictCacheBytes   int64
	// Federation is the Federation the API serves. Required.
	Federation types.NamespacedName
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes caps a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RatePerSecond and RateBurst limit the requests of one client address; 0 means the
	// defaults, a negative RatePerSecond no limit.
	RatePerSecond float64
	RateBurst     int
	// OperatorRatePerSecond and OperatorRateBurst limit the authenticated requests of
	// one operator, counted once its token verified (so no one can spend another's
	// budget); 0 means the defaults, a negative OperatorRatePerSecond no limit.
	OperatorRatePerSecond float64
	OperatorRateBurst     int
	// RegistrationLimit is how many registrations one client address (an IPv6 address's
	// /64) may make in RegistrationWindow (registerlimit.go); 0 means
	// DefaultRegistrationLimit, a negative number no limit; at most MaxRegistrationLimit.
	RegistrationLimit int
	// RegistrationWindow is the limit's sliding window; 0 means DefaultRegistrationWindow;
	// at most MaxRegistrationWindow.
	RegistrationWindow time.Duration
	// MaxPendingRegistrations bounds the operators that may wait for approval (Pending)
	// when the Federation's spec.registration is approval: past it POST
	// /federation/register answers 503 too_many_pending_registrations. 0 means
	// DefaultMaxPendingRegistrations, a negative number no bound.
	MaxPendingRegistrations int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client
	// address that the rate limits count (registerlimit.go); empty: the connection's
	// address is the client's.
	TrustedProxies []netip.Prefix
	// RegisterTimeout bounds the wait for the controller; 0 means DefaultRegisterTimeout.
	RegisterTimeout time.Duration
	// LogDir is the directory of the embedded transparency logs, the controllers' LogDir
	// (controllers.Options.LogDir): GET /federation/log/... serves the Federation's from
	// LogDir/<namespace>/<name>. Empty: the log is not served.
	LogDir string
	// SidecarDir is the directory of the attestation sidecars' store (pkg/sidecar), on the
	// volume every replica mounts. Empty: submissions with sidecars are answered 503.
	SidecarDir string
	// MaxSubmissionsInFlight and MaxOperatorSubmissionsInFlight bound the submissions
	// this replica reads and waits on at once, in all and of one operator;
	// SidecarBytesInFlight and OperatorSidecarBytesInFlight the sidecar bytes they hold
	// (submit_budget.go). 0 means the defaults.
	MaxSubmissionsInFlight, MaxOperatorSubmissionsInFlight int
	SidecarBytesInFlight, OperatorSidecarBytesInFlight     int64
	// OperatorSidecarQuotaBytes bounds the distinct sidecar bytes one operator's
	// submissions name, SidecarStorageBytes what the store holds (sidecar_quota.go); 0
	// means the defaults.
	OperatorSidecarQuotaBytes, SidecarStorageBytes int64
	// SidecarSweepInterval is how often a running server sweeps the sidecar store; 0
	// means DefaultSidecarSweepInterval.
	SidecarSweepInterval time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the HTTP server's
	// (http.Server's fields of the same names) when it runs as a Runnable; 0 means
	// DefaultReadHeaderTimeout and the others.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Version is what /federation/status reports; the zero value means version.Get().
	Version version.Info
	// Logger receives failures; nil means slog.Default().
	Logger *slog.Logger
}

// Server is the federation API's http.Handler. It is safe for concurrent use.
type Server struct {
	client     client.Client
	apiReader  client.Reader
	history    *history.Store            // nil: every record is an object
	merkle     *federation.MerkleAnchors // the checked trees of Merkle-form anchors; nil without history
	federation types.NamespacedName
	now        func() time.Time
	started    time.Time
	maxBody    int64
	limiter    *addressLimiter
	// operatorLimiter is keyed by operator ID.
	operatorLimiter *addressLimiter
	regTimeout      time.Duration
	// registrations is the per-address registration limit; nil: none.
	registrations *registrationLimiter
	// maxPending bounds the Pending operators under approval; negative: no bound.
	maxPending     int
	trustedProxies []netip.Prefix
	// timeouts are the http.Server's: ReadHeaderTimeout, ReadTimeout, WriteTimeout and
	// IdleTimeout with the defaults applied.
	timeouts httpTimeouts
	logDir   string
	// sidecars is the sidecar store; nil without Options.SidecarDir.
	sidecars *sidecar.Store
	// inFlight bounds the submissions in flight and the sidecar bytes they hold.
	inFlight *inFlight
	// sidecarQuota and sidecarStorage are the operator's and the store's bounds;
	// sidecarsStored is the store's size as last measured, plus what was kept since.
	sidecarQuota, sidecarStorage int64
	sidecarsStored               atomic.Int64
	sweepInterval                time.Duration
	informers                    cache.Informers
	version                      version.Info
	log                          *slog.Logger
	// pageRows is how many rows of each table the public page shows (pageSize; tests
	// page smaller).
	pageRows int
	// kept holds the status counts, kept from the cache's events.
	kept *kept
	// verdicts remembers the checks of immutable anchors and submissions.
	verdicts *federation.VerdictCache

	mux         *http.ServeMux
	methods     map[string][]string // path -> methods served, for 405's Allow
	openAPIJSON []byte
}

// New returns a Server for o.
func New(o Options) (*Server, error) {
	if o.Client == nil || o.APIReader == nil || o.Informers == nil {
		return nil, errors.New("webhook: Options.Client, Options.APIReader and Options.Informers are required")
	}
	if o.Federation.Namespace == "" || o.Federation.Name == "" {
		return nil, errors.New("webhook: Options.Federation needs a namespace and a name")
	}
	s := &Server{client: o.Client, apiReader: o.APIReader, history: o.History, federation: o.Federation, now: o.Now,
		maxBody: o.MaxBodyBytes, regTimeout: o.RegisterTimeout, logDir: o.LogDir, version: o.Version, log: o.Logger, pageRows: pageSize}
	if s.now == nil {
		s.now = time.Now
	}
	if o.History != nil {
		s.merkle = federation.NewMerkleAnchors(o.History)
	}
	if o.SidecarDir != "" {
		s.sidecars = sidecar.NewStore(o.SidecarDir)
	}
	s.inFlight, s.informers = newInFlight(o), o.Informers
	s.sidecarQuota = orDefault(o.OperatorSidecarQuotaBytes, DefaultOperatorSidecarQuotaBytes)
	s.sidecarStorage = orDefault(o.SidecarStorageBytes, DefaultSidecarStorageBytes)
	s.sweepInterval = orDefault(o.SidecarSweepInterval, DefaultSidecarSweepInterval)
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.regTimeout <= 0 {
		s.regTimeout = DefaultRegisterTimeout
	}
	s.timeouts = httpTimeouts{readHeader: orDefault(o.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		read: orDefault(o.ReadTimeout, DefaultReadTimeout), write: orDefault(o.WriteTimeout, DefaultWriteTimeout),
		idle: orDefault(o.IdleTimeout, DefaultIdleTimeout)}
	if s.version == (version.Info{}) {
		s.version = version.Get()
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := s.setRegistrationLimits(o); err != nil {
		return nil, err
	}
	s.limiter = newLimiter(o.RatePerSecond, o.RateBurst, DefaultRatePerSecond, DefaultRateBurst, s.now)
	s.operatorLimiter = newLimiter(o.OperatorRatePerSecond, o.OperatorRateBurst, DefaultOperatorRatePerSecond, DefaultOperatorRateBurst, s.now)
	s.started = s.now()
	var err error
	if s.kept, err = newKept(o.Informers, o.Federation.Namespace, s.now); err != nil {
		return nil, err
	}
	s.verdicts = federation.NewVerdictCache(o.VerdictCacheEntries, o.VerdictCacheBytes)
	rs := s.routes()
	s.mux, s.methods = http.NewServeMux(), map[string][]string{}
	for _, rt := range rs {
		pattern := rt.path
		if pattern == "/" {
			pattern = "/{$}" // the page at / alone, not every path under it
		}
		s.mux.Handle(rt.method+" "+pattern, rt.handler)
		s.methods[rt.path] = append(s.methods[rt.path], rt.method)
	}
	doc, err := openAPI(rs, s.version.Version)
	if err != nil {
		return nil, fmt.Errorf("webhook: openapi: %w", err)
	}
	s.openAPIJSON = doc
	return s, nil
}

// ServeHTTP applies the rate limit and the body limit, then routes r.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.limiter != nil {
		if wait, ok := s.limiter.allow(addressKey(s.clientAddress(r))); !ok {
			writeError(w, &apiError{status: http.StatusTooManyRequests, code: "rate_limited", retryAfter: wait,
				message: "too many requests from this address; retry after the Retry-After seconds"})
			return
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	if _, pattern := s.mux.Handler(r); pattern == "" { // the mux's own 404 and 405 are text
		if methods := s.methods[r.URL.Path]; methods != nil {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				message: r.Method + " is not served on " + r.URL.Path})
			return
		}
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "no such endpoint"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// newLimiter returns a limiter of perSecond and burst (0: the defaults given), or nil for
// a negative perSecond: no limit.
func newLimiter(perSecond float64, burst int, defaultPerSecond float64, defaultBurst int, now func() time.Time) *addressLimiter {
	if perSecond < 0 {
		return nil
	}
	if perSecond == 0 {
		perSecond = defaultPerSecond
	}
	if burst <= 0 {
		burst = defaultBurst
	}
	return newAddressLimiter(perSecond, burst, now)
}

// setRegistrationLimits applies o's registration limit, pending bound and trusted
// proxies to s, with their defaults, refusing values out of bounds.
func (s *Server) setRegistrationLimits(o Options) error {
	limit, window := o.RegistrationLimit, o.RegistrationWindow
	if limit == 0 {
		limit = DefaultRegistrationLimit
	}
	if window == 0 {
		window = DefaultRegistrationWindow
	}
	switch {
	case limit > MaxRegistrationLimit:
		return fmt.Errorf("webhook: Options.RegistrationLimit %d: at most %d", limit, MaxRegistrationLimit)
	case window < 0 || window > MaxRegistrationWindow:
		return fmt.Errorf("webhook: Options.RegistrationWindow %s: want above 0 and at most %s", window, MaxRegistrationWindow)
	case limit > 0:
		s.registrations = newRegistrationLimiter(limit, window, s.now)
	}
	s.maxPending = o.MaxPendingRegistrations
	if s.maxPending == 0 {
		s.maxPending = DefaultMaxPendingRegistrations
	}
	for _, p := range o.TrustedProxies {
		if !p.IsValid() {
			return errors.New("webhook: Options.TrustedProxies holds an invalid prefix")
		}
		s.trustedProxies = append(s.trustedProxies, p.Masked())
	}
	return nil
}

// Runnable serves s on addr until its context ends; add it to the manager. It runs on
// every replica, the leader or not.
func (s *Server) Runnable(addr string) *Runnable {
	return &Runnable{server: s, addr: addr}
}

// Runnable is a manager.Runnable that serves the API and collects expired challenge
// records.
type Runnable struct {
	server *Server
	addr   string
}

// NeedLeaderElection returns false: every replica serves the API.
func (r *Runnable) NeedLeaderElection() bool { return false }

// Start listens on the address and serves until ctx ends.
func (r *Runnable) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("federation API: listen on %s: %w", r.addr, err)
	}
	srv := r.server.httpServer(ctx)
	go r.server.collectLoop(ctx, DefaultCollectInterval)
	go r.server.sweepLoop(ctx, r.server.sweepInterval)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("federation API: %w", err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// httpTimeouts are an http.Server's timeouts.
type httpTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// orDefault is v, or def when v is not positive (an Options field left zero).
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// httpServer is the http.Server of s, with its timeouts, whose requests' contexts end
// with ctx.
func (s *Server) httpServer(ctx context.Context) *http.Server {
	return &http.Server{Handler: s, ReadHeaderTimeout: s.timeouts.readHeader, ReadTimeout: s.timeouts.read,
		WriteTimeout: s.timeouts.write, IdleTimeout: s.timeouts.idle, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
}

// collectLoop deletes expired challenge records every interval until ctx ends.
func (s *Server) collectLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := s.collectUsedChallenges(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "Failed to collect expired challenge records", "error", err)
			}
			if n > 0 {
				s.log.DebugContext(ctx, "Deleted expired challenge records", "count", n)
			}
		}
	}
}
