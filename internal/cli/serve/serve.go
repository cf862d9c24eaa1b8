// Package serve is `cairn serve`, the chain owner's service: the chain's REST API, OTLP
// ingestion and documentation pages over a local chain, which `cairn dev` runs too.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/consensus"
	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/policy"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Timeouts of the chain service's HTTP server. Reads and writes are generous because an
// export sent to /api/export/verify may be a gigabyte, and one downloaded from /api/export
// streams a whole chain.
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveReadTimeout       = 10 * time.Minute
	serveWriteTimeout      = 30 * time.Minute
	serveIdleTimeout       = 2 * time.Minute
	serveShutdownTimeout   = 15 * time.Second
)

// serverTimeouts are an HTTP server's timeouts (http.Server's fields of the same names).
type serverTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// defaultServeTimeouts are the chain service's; tests shorten them.
var defaultServeTimeouts = serverTimeouts{readHeader: serveReadHeaderTimeout, read: serveReadTimeout,
	write: serveWriteTimeout, idle: serveIdleTimeout}

// DefaultRegion is the grid region cairn serve and cairn dev attribute energy to
// when a span or an estimate request names none: the documented default.
const DefaultRegion = analysis.DefaultRegion

// Options configures `cairn serve`.
type Options struct {
	cmdutil.NoCompletion
	chain   cmdutil.ChainOptions
	addr    string
	signKey string
	apiKey  string
	// allowedHosts are more Host headers to answer to than the listen address's.
	allowedHosts []string
	// region is the default grid region of energy figures.
	region string
	// intensityOverrides are --intensity-overrides: gCO2/kWh by region, unparsed.
	intensityOverrides map[string]string
	// policyRules is a rule file (YAML or JSON); empty: policy.DefaultRules().
	policyRules string
	// consensusURL is an OpenAI-compatible API root; empty: no model provider.
	consensusURL    string
	consensusAPIKey string
	// consensusModels are the models of a consensus request that names none.
	consensusModels []string
}

// NewCommand returns `cairn serve`, the chain owner's service.
func NewCommand() *cobra.Command {
	o := &Options{addr: "127.0.0.1:8080", region: DefaultRegion}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the chain's REST API, OTLP ingestion, its OpenAPI document and documentation pages",
		Long: `Serve the local chain service: the REST API under /api (read, verify and export the
chain, verify exports and replayed outputs, regression, energy, policy, containment,
consensus and the layers' state), OTLP/HTTP span ingestion at POST /v1/traces, /health and
/version, the OpenAPI document at /openapi.json, and documentation pages that work offline
at /docs and /redoc.

The chain's HMAC secret is required (CAIRN_HMAC_SECRET, --secret-file); the chain file is
created when missing. --sign-key lets POST /api/export sign exports. With an API key
(CAIRN_API_KEY), every /api route but /api/health and /api/version, and /v1/traces, need
"Authorization: Bearer <key>". --policy-rules replaces the default policy rules with a
YAML or JSON rule file. --consensus-url names an OpenAI-compatible API (such as
http://127.0.0.1:8000/v1) that /api/consensus/evaluate asks; without it that route
answers 503. Ctrl-C (SIGINT) or SIGTERM stops the server gracefully.

Beyond loopback (--addr other than 127.0.0.1, ::1 or localhost) an API key is required.
Requests whose Host header names neither localhost, --addr's host nor one of
--allowed-hosts are answered 421, except /health: this stops web pages that rebind
their own name to the server's address.`,
		Args: cmdutil.NoArgs,
		Example: `  # Serve the chain in chain.db on 127.0.0.1:8080, the secret from the environment
  CAIRN_HMAC_SECRET=$(openssl rand -hex 32) cairn serve --db chain.db

  # Serve beyond loopback behind a reverse proxy, with an API key and signed exports
  CAIRN_API_KEY=... cairn serve --addr 0.0.0.0:8080 --allowed-hosts chain.example.org --sign-key operator.key`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.chain.AddFlags(cmd)
	cmd.Flags().StringVar(&o.addr, "addr", o.addr, "address to listen on, host:port")
	cmd.Flags().StringVar(&o.signKey, "sign-key", "", "operator private key (PKCS #8 PEM, as cairn keygen writes) that signs exports")
	cmd.Flags().StringVar(&o.apiKey, "api-key", "", "API key the /api routes require as a bearer token (prefer CAIRN_API_KEY: flags show in process lists)")
	cmd.Flags().StringSliceVar(&o.allowedHosts, "allowed-hosts", nil, "comma-separated host names or addresses the Host header may name besides localhost and --addr's host (e.g. a reverse proxy's name)")
	cmd.Flags().StringVar(&o.region, "region", o.region, "grid region of the energy of calls that name none (cloud.region); empty: world's intensity")
	cmdutil.AddIntensityOverridesFlag(cmd, &o.intensityOverrides)
	cmd.Flags().StringVar(&o.policyRules, "policy-rules", "", "policy rule file, YAML or JSON (default: the built-in rules)")
	cmd.Flags().StringVar(&o.consensusURL, "consensus-url", "", "OpenAI-compatible API root that consensus requests ask, e.g. http://127.0.0.1:8000/v1")
	cmd.Flags().StringVar(&o.consensusAPIKey, "consensus-api-key", "", "API key of --consensus-url (prefer CAIRN_CONSENSUS_API_KEY: flags show in process lists)")
	cmd.Flags().StringSliceVar(&o.consensusModels, "consensus-models", nil, "comma-separated models a consensus request that names none asks (2 to 8)")
	return cmd
}

// Validate refuses to listen beyond loopback without an API key.
func (o *Options) Validate() error {
	if err := CheckListen("--addr", o.addr, o.apiKey); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run opens the chain service and serves until the command's context ends.
func (o *Options) Run(cmd *cobra.Command) error {
	svc, err := o.open()
	if err != nil {
		return err
	}
	err = svc.Serve(cmd.Context(), o.addr, func(url string) {
		slog.InfoContext(cmd.Context(), "Started the chain service", "url", url, "docs", url+"/docs",
			"db", o.chain.DB, "apiKey", o.apiKey != "", "signingKey", o.signKey != "", "region", o.region, "intensityOverrides", o.intensityOverrides,
			"policyRules", o.policyRules, "consensus", o.consensusURL != "")
	})
	if err == nil {
		slog.InfoContext(cmd.Context(), "Stopped the chain service", "db", o.chain.DB)
	}
	return err
}

// open loads the secret, the signing key, the policy rules and the consensus provider,
// and opens the chain service.
func (o *Options) open() (*ChainService, error) {
	hosts, err := AllowedHosts(o.addr, o.allowedHosts)
	if err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	secret, err := o.chain.Secret(true)
	if err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	opts := api.Options{APIKey: o.apiKey, AllowedHosts: hosts, DefaultRegion: o.region, ConsensusModels: o.consensusModels}
	if opts.IntensityOverrides, err = cmdutil.IntensityOverrides("--intensity-overrides", o.intensityOverrides); err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	if o.signKey != "" {
		text, err := os.ReadFile(o.signKey)
		if err != nil {
			return nil, fmt.Errorf("read signing key: %w", err)
		}
		if opts.SigningKey, err = protocol.ParsePrivateKeyPEM(text); err != nil {
			return nil, fmt.Errorf("signing key %s: %w", o.signKey, err)
		}
	}
	if o.policyRules != "" {
		rules, err := policy.LoadRules(o.policyRules)
		if err != nil {
			return nil, fmt.Errorf("--policy-rules: %w", err)
		}
		if opts.Policy, err = policy.New(rules, policy.Options{}); err != nil {
			return nil, fmt.Errorf("--policy-rules %s: %w", o.policyRules, err)
		}
	}
	if opts.Consensus, err = o.consensusEvaluator(); err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	return OpenChainService(o.chain.DB, secret, opts)
}

// consensusEvaluator builds the evaluator of /api/consensus/evaluate from the consensus
// flags: one OpenAI-compatible provider serving every model, or nil without
// --consensus-url.
func (o *Options) consensusEvaluator() (*consensus.Evaluator, error) {
	if o.consensusURL == "" {
		if o.consensusAPIKey != "" || len(o.consensusModels) > 0 {
			return nil, errors.New("--consensus-api-key and --consensus-models need --consensus-url")
		}
		return nil, nil
	}
	p, err := consensus.NewOpenAIProvider(consensus.OpenAIConfig{BaseURL: o.consensusURL, APIKey: o.consensusAPIKey})
	if err != nil {
		return nil, fmt.Errorf("--consensus-url: %w", err)
	}
	return consensus.NewEvaluator(nil, p), nil
}

// ChainService is the chain API over an open chain, ready to serve. `cairn serve` and
// `cairn dev` run it.
type ChainService struct {
	Store   *store.Store
	handler http.Handler
	// timeouts are the HTTP server's: defaultServeTimeouts, which tests shorten.
	timeouts serverTimeouts
}

// OpenChainService opens the chain at db (creating it when missing) and builds its API
// from o, to which it adds the store, the secret, the logger and the OTLP receiver at
// POST /v1/traces (behind the API key too).
func OpenChainService(db string, secret []byte, o api.Options) (*ChainService, error) {
	s, err := store.Open(db, secret)
	if err != nil {
		return nil, err
	}
	traces, err := otlp.NewHandler(s, otlp.WithLogger(slog.Default()))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("OTLP receiver: %w", err), s.Close())
	}
	o.Store, o.DBPath, o.Secret, o.Logger, o.Traces = s, db, secret, slog.Default(), traces
	h, err := api.New(o)
	if err != nil {
		return nil, errors.Join(cmdutil.UsageError{Err: err}, s.Close())
	}
	return &ChainService{Store: s, handler: h, timeouts: defaultServeTimeouts}, nil
}

// Serve listens on addr and serves until ctx ends; then it stops taking connections,
// waits up to serveShutdownTimeout for requests in flight, and closes the chain.
// listening is called with the server's base URL once it accepts connections.
func (c *ChainService) Serve(ctx context.Context, addr string, listening func(url string)) (err error) {
	defer func() { err = errors.Join(err, c.Store.Close()) }()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("chain service: %w", err)
	}
	srv := &http.Server{
		Handler:           c.handler,
		ReadHeaderTimeout: c.timeouts.readHeader,
		ReadTimeout:       c.timeouts.read,
		WriteTimeout:      c.timeouts.write,
		IdleTimeout:       c.timeouts.idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
	listening("http://" + DialAddress(l.Addr().String())) // connections wait in the backlog until Serve takes them
	return cmdutil.ServeHTTP(ctx, srv, l, serveShutdownTimeout, "chain service")
}
