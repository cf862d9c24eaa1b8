package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/api"
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

// serveOptions configures `cairn serve`.
type serveOptions struct {
	chain   chainOptions
	addr    string
	signKey string
	apiKey  string
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{addr: "127.0.0.1:8080"}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the chain's REST API, its OpenAPI document and documentation pages",
		Long: `Serve the local chain service: the REST API under /api (read, verify and export the
chain, verify exports and replayed outputs), /health and /version, the OpenAPI document at
/openapi.json, and documentation pages that work offline at /docs and /redoc.

The chain's HMAC secret is required (CAIRN_HMAC_SECRET, --secret-file); the chain file is
created when missing. --sign-key lets POST /api/export sign exports. With an API key
(CAIRN_API_KEY), every /api route but /api/health and /api/version needs
"Authorization: Bearer <key>". Ctrl-C (SIGINT) or SIGTERM stops the server gracefully.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := o.open()
			if err != nil {
				return err
			}
			err = svc.serve(cmd.Context(), o.addr, func(url string) {
				slog.InfoContext(cmd.Context(), "Started the chain service", "url", url, "docs", url+"/docs",
					"db", o.chain.db, "apiKey", o.apiKey != "", "signingKey", o.signKey != "")
			})
			if err == nil {
				slog.InfoContext(cmd.Context(), "Stopped the chain service", "db", o.chain.db)
			}
			return err
		},
	}
	o.chain.addFlags(cmd)
	cmd.Flags().StringVar(&o.addr, "addr", o.addr, "address to listen on, host:port")
	cmd.Flags().StringVar(&o.signKey, "sign-key", "", "operator private key (PKCS #8 PEM, as cairn keygen writes) that signs exports")
	cmd.Flags().StringVar(&o.apiKey, "api-key", "", "API key the /api routes require as a bearer token (prefer CAIRN_API_KEY: flags show in process lists)")
	return cmd
}

// open loads the secret and the signing key and opens the chain service.
func (o *serveOptions) open() (*chainService, error) {
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return nil, usageError{fmt.Errorf("--addr %q: want host:port", o.addr)}
	}
	secret, err := o.chain.secret(true)
	if err != nil {
		return nil, usageError{err}
	}
	var key ed25519.PrivateKey
	if o.signKey != "" {
		text, err := os.ReadFile(o.signKey)
		if err != nil {
			return nil, fmt.Errorf("read signing key: %w", err)
		}
		if key, err = protocol.ParsePrivateKeyPEM(text); err != nil {
			return nil, fmt.Errorf("signing key %s: %w", o.signKey, err)
		}
	}
	return openChainService(o.chain.db, secret, key, o.apiKey)
}

// chainService is the chain API over an open chain, ready to serve. `cairn serve` and
// `cairn dev` run it.
type chainService struct {
	store   *store.Store
	handler http.Handler
}

// openChainService opens the chain at db (creating it when missing) and builds its API.
func openChainService(db string, secret []byte, key ed25519.PrivateKey, apiKey string) (*chainService, error) {
	s, err := store.Open(db, secret)
	if err != nil {
		return nil, err
	}
	// POST /v1/traces (OTLP ingestion) goes in api.Options.Traces; it needs the API key too.
	h, err := api.New(api.Options{Store: s, DBPath: db, Secret: secret, SigningKey: key, APIKey: apiKey, Logger: slog.Default()})
	if err != nil {
		return nil, errors.Join(usageError{err}, s.Close())
	}
	return &chainService{store: s, handler: h}, nil
}

// serve listens on addr and serves until ctx ends; then it stops taking connections,
// waits up to serveShutdownTimeout for requests in flight, and closes the chain.
// listening is called with the server's base URL once it accepts connections.
func (c *chainService) serve(ctx context.Context, addr string, listening func(url string)) (err error) {
	defer func() { err = errors.Join(err, c.store.Close()) }()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("chain service: %w", err)
	}
	srv := &http.Server{
		Handler:           c.handler,
		ReadHeaderTimeout: serveReadHeaderTimeout,
		ReadTimeout:       serveReadTimeout,
		WriteTimeout:      serveWriteTimeout,
		IdleTimeout:       serveIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	listening("http://" + dialAddress(l.Addr().String()))
	select {
	case err := <-done:
		return fmt.Errorf("chain service: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("chain service: shut down: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("chain service: %w", err)
	}
	return nil
}
