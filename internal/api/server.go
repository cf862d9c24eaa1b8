package api

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/consensus"
	"github.com/cairn-dev/cairn/internal/policy"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/version"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// DefaultMaxUploadBytes caps an export sent to POST /api/export/verify when
// Options.MaxUploadBytes is 0: about two million entries of typical size.
const DefaultMaxUploadBytes = 1 << 30

// Options configures a Server.
type Options struct {
	// Store is the chain the server reads. Required.
	Store *store.Store
	// DBPath is the path Store was opened from, which /health reports.
	DBPath string
	// Secret is the chain's HMAC secret: POST /api/export/verify checks HMACs with it
	// when the request asks for it (use_server_secret=true), and /api/chain/verify always.
	// Nil: such requests are refused with 409 no_secret.
	Secret []byte
	// SigningKey signs exports (POST /api/export). Nil: exports are refused with 409.
	SigningKey ed25519.PrivateKey
	// APIKey, when not empty, is required as a bearer token on every route except
	// /health, /version, /api/health, /api/version, /openapi.json, /docs and /redoc.
	APIKey string
	// AllowedHosts are the hosts a request's Host header may name (a name or an IP
	// address, with or without a port, which is not compared). Others are answered 421
	// host_not_allowed, except /health and /api/health: this stops a web page that
	// rebinds its name to the server's address. Empty: any Host is served (tests and
	// embedding; cairn serve always sets it).
	AllowedHosts []string
	// Version is what /version reports; the zero value means version.Get().
	Version version.Info
	// Logger receives request logs (debug level) and failures; nil means slog.Default().
	Logger *slog.Logger
	// MaxUploadBytes caps an uploaded export; 0 means DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Traces, when not nil, is mounted at POST /v1/traces (OTLP/HTTP span ingestion),
	// behind the API key like the /api routes. It caps its own request bodies.
	Traces http.Handler
	// DefaultRegion is the region of the energy figures of entries and estimate
	// requests that name none; empty leaves them to analysis.WorldRegion's intensity.
	DefaultRegion string
	// IntensityOverrides are grid intensities (gCO2/kWh by region) over
	// analysis.DefaultGridIntensity for every energy answer, custom regions included;
	// a request's own overrides take precedence. They must pass
	// analysis.ValidateOverrides.
	IntensityOverrides map[string]float64
	// Policy checks the requests of /api/policy/evaluate and /api/containment/evaluate;
	// nil means an engine of policy.DefaultRules().
	Policy *policy.Engine
	// Consensus asks models for /api/consensus/evaluate; nil: that route answers 503,
	// as no model provider is configured.
	Consensus *consensus.Evaluator
	// ConsensusModels are the models a consensus request that names none asks
	// (consensus.MinModels to consensus.MaxModels distinct names); none: requests must
	// name their models.
	ConsensusModels []string
}

// Server is the chain service's HTTP handler. It is safe for concurrent use.
type Server struct {
	store        *store.Store
	dbPath       string
	secret       []byte
	signingKey   ed25519.PrivateKey
	apiKey       string
	apiKeyDigest [sha256.Size]byte
	allowedHosts map[string]bool // normalized; nil: any
	version      version.Info
	log          *slog.Logger
	maxUpload    int64
	traces       http.Handler

	// intensityOverrides are Options.IntensityOverrides, keys lowercased.
	intensityOverrides map[string]float64

	defaultRegion   string
	policy          *policy.Engine
	consensus       *consensus.Evaluator
	consensusModels []string

	mux         *http.ServeMux
	routes      []route
	publicPaths map[string]bool // paths of the public routes
	openAPIJSON []byte
	assets      map[string]asset
	dashboard   *dashboard
	handler     http.Handler
}

// route is one operation: what the mux matches, whether it needs the API key, what it
// does, and how the OpenAPI document describes it.
type route struct {
	method string
	// path is in http.ServeMux syntax, which OpenAPI shares for simple wildcards:
	// /api/chain/{seq}.
	path string
	// pattern, when set, is what the mux matches instead of path: "/{$}" for "/",
	// which would match every path.
	pattern string
	public  bool // served without the API key
	handler http.Handler
	op      operation
}

// group is a set of routes under one OpenAPI tag, declared in one routes_*.go file.
type group struct {
	name, description string
	routes            []route
}

// groups lists the route groups the server serves, in the order the document lists
// them. Each group's routes and schemas are declared in its own routes_*.go file; adding
// a group is that file and one line here.
func (s *Server) groups(c *components) []group {
	gs := []group{
		s.chainRoutes(c),
		s.exportRoutes(c),
		s.replayRoutes(c),
		s.regressionRoutes(c),
		s.analysisRoutes(c),
		s.policyRoutes(c),
		s.consensusRoutes(c),
		s.layersRoutes(c),
		s.dashboardRoutes(c),
	}
	if s.traces != nil {
		gs = append(gs, s.tracesRoutes(c))
	}
	return append(gs, s.metaRoutes(c))
}

// New builds the server's routes, its OpenAPI document and its pages.
func New(o Options) (*Server, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("api: no chain store")
	case o.Secret != nil && len(o.Secret) < protocol.MinSecretBytes:
		return nil, fmt.Errorf("api: HMAC secret is %d bytes, want at least %d", len(o.Secret), protocol.MinSecretBytes)
	case o.SigningKey != nil && len(o.SigningKey) != ed25519.PrivateKeySize:
		return nil, fmt.Errorf("api: signing key is %d bytes, want %d", len(o.SigningKey), ed25519.PrivateKeySize)
	case o.MaxUploadBytes < 0:
		return nil, fmt.Errorf("api: upload cap %d is negative", o.MaxUploadBytes)
	case strings.TrimSpace(o.APIKey) != o.APIKey:
		return nil, errors.New("api: the API key starts or ends with white space")
	case len(o.DefaultRegion) > analysis.MaxNameBytes:
		return nil, fmt.Errorf("api: default region is %d bytes, at most %d allowed", len(o.DefaultRegion), analysis.MaxNameBytes)
	}
	if err := analysis.ValidateOverrides(o.IntensityOverrides); err != nil {
		return nil, fmt.Errorf("api: intensity overrides: %w", err)
	}
	if len(o.ConsensusModels) > 0 {
		// The models are checked as a request naming them would be.
		if err := (consensus.Request{Prompt: "?", Models: o.ConsensusModels}).Validate(); err != nil {
			return nil, fmt.Errorf("api: default consensus models: %w", err)
		}
	}
	s := &Server{
		store: o.Store, dbPath: o.DBPath, secret: bytes.Clone(o.Secret), signingKey: o.SigningKey,
		apiKey: o.APIKey, apiKeyDigest: sha256.Sum256([]byte(o.APIKey)), allowedHosts: newHostSet(o.AllowedHosts),
		version: o.Version, log: o.Logger, maxUpload: o.MaxUploadBytes, traces: o.Traces,
		defaultRegion: o.DefaultRegion, policy: o.Policy, consensus: o.Consensus, consensusModels: slices.Clone(o.ConsensusModels),
		mux: http.NewServeMux(), publicPaths: map[string]bool{},
	}
	s.intensityOverrides = analysis.MergeOverrides(nil, o.IntensityOverrides)
	if s.policy == nil {
		engine, err := policy.New(policy.DefaultRules(), policy.Options{})
		if err != nil {
			return nil, fmt.Errorf("api: the default policy rules: %w", err)
		}
		s.policy = engine
	}
	if s.version == (version.Info{}) {
		s.version = version.Get()
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.maxUpload == 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	var err error
	if s.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if s.dashboard, err = loadDashboard(s.version.Version); err != nil {
		return nil, err
	}
	c := newComponents()
	groups := s.groups(c)
	for _, g := range groups {
		for _, rt := range g.routes {
			h := rt.handler
			if rt.public {
				s.publicPaths[rt.path] = true
			} else {
				h = s.requireKey(h)
			}
			pattern := rt.path
			if rt.pattern != "" {
				pattern = rt.pattern
			}
			s.mux.Handle(rt.method+" "+pattern, h)
			s.routes = append(s.routes, rt)
		}
	}
	if c.Err() != nil {
		return nil, fmt.Errorf("api: build the OpenAPI document: %w", c.Err())
	}
	if s.openAPIJSON, err = s.openAPI(groups, c); err != nil {
		return nil, fmt.Errorf("api: build the OpenAPI document: %w", err)
	}
	s.handler = logRequests(s.log, s.checkHost(refuseCrossOrigin(http.HandlerFunc(s.dispatch))))
	return s, nil
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// dispatch hands r to the route that matches it, and answers in JSON when none does.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// No route matches: the mux answers 404, or 405 with the methods that the path
	// allows. Let it, into a recorder, and give its answer a JSON body. Under /api the
	// key is asked for first, so that the routes cannot be probed without it.
	if strings.HasPrefix(r.URL.Path, "/api/") && !s.publicPaths[r.URL.Path] && !s.authorized(r) {
		unauthorized(w)
		return
	}
	rec := &headerRecorder{header: http.Header{}}
	s.mux.ServeHTTP(rec, r)
	switch rec.status {
	case http.StatusMethodNotAllowed:
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed,
			fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
	case http.StatusNotFound:
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no route %s; GET /openapi.json lists them", r.URL.Path))
	default: // the mux's answers are all above; pass anything else on as it is
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	}
}

// headerRecorder keeps what the mux answers when no route matches.
type headerRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *headerRecorder) Header() http.Header { return r.header }

func (r *headerRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *headerRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
