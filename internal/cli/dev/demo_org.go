package dev

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/cli/serve"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/internal/store"
)

// demoOrg is one organization of the demo: its app, and its directory, which holds
//
//	chain-secret.hex  the HMAC secret of its chain (made on the first run)
//	chain.db          its chain
//	keys/, keys-N/    its Ed25519 key pairs (cairn keygen), the newest the current one
//	config/           its federation client's configuration (--config-dir)
//	exports/          the exports it submitted, run-N.json, which it hands to auditors
//	receipts/         its receipts, one file an anchor
type demoOrg struct {
	name, slug string
	// app, system and models describe the spans its app sends.
	app, system string
	models      []string
	// spans is how many spans its app sends a run.
	spans int
	// dir is its directory, absolute.
	dir string

	// Learned during a run:
	// operatorID is its operator ID at the federation.
	operatorID string
	// keyID is the operator ID of the key it signs with: its operatorID until it rotates.
	keyID string
	// export is the export of this run's submission, relative to dir.
	export string
}

// demoOrgs are the organizations of the story, with their directories under root.
func demoOrgs(root string) []*demoOrg {
	orgs := []*demoOrg{
		{name: "Acme Research", slug: "acme-research", app: "literature-assistant", system: "openai", models: []string{"gpt-4o", "gpt-4o-mini"}, spans: 4},
		{name: "Borealis Health", slug: "borealis-health", app: "triage-notes", system: "anthropic", models: []string{"claude-sonnet-4", "claude-haiku-4"}, spans: 3},
		{name: "Cobalt Labs", slug: "cobalt-labs", app: "code-review-bot", system: "mistral", models: []string{"codestral", "mistral-large"}, spans: 5},
	}
	for _, o := range orgs {
		o.dir = filepath.Join(root, o.slug)
	}
	return orgs
}

// Files of an organization's directory.
const (
	demoSecretFile = "chain-secret.hex"
	demoConfigDir  = "config"
	demoReceipts   = "receipts"
	demoExports    = "exports"
	demoFirstKeys  = "keys"
)

func (o *demoOrg) path(elem ...string) string {
	return filepath.Join(append([]string{o.dir}, elem...)...)
}

// config is the organization's federation client configuration.
func (o *demoOrg) config() clientconfig.Dir { return clientconfig.Dir(o.path(demoConfigDir)) }

// prepare makes the organization's directory and, the first time, its HMAC secret.
func (o *demoOrg) prepare() error {
	for _, d := range []string{demoReceipts, demoExports} {
		if err := os.MkdirAll(o.path(d), 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(o.path(demoSecretFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return errors.Join(err, f.Close())
	}
	_, err = f.WriteString(hex.EncodeToString(secret) + "\n")
	return errors.Join(err, f.Close())
}

// nextKeyDir is the first of keys, keys-2, keys-3... that does not exist yet.
func (o *demoOrg) nextKeyDir() string {
	for i := 1; ; i++ {
		d := demoFirstKeys
		if i > 1 {
			d = fmt.Sprintf("%s-%d", demoFirstKeys, i)
		}
		if _, err := os.Stat(o.path(d)); errors.Is(err, fs.ErrNotExist) {
			return d
		}
	}
}

// sealSpans runs the organization's chain service (cairn serve's) on a free loopback
// port while its app sends o.spans spans with gen_ai.* attributes through the
// OpenTelemetry SDK's OTLP/HTTP exporter, as any app would, and stops it. It returns the
// service's URL and the seqs the spans were sealed as.
func (o *demoOrg) sealSpans(ctx context.Context) (url string, first, last int64, err error) {
	secret, err := store.LoadSecret("", o.path(demoSecretFile))
	if err != nil {
		return "", 0, 0, err
	}
	hosts, _ := serve.AllowedHosts("127.0.0.1:0", nil)
	svc, err := serve.OpenChainService(o.path("chain.db"), secret, api.Options{AllowedHosts: hosts, DefaultRegion: serve.DefaultRegion})
	if err != nil {
		return "", 0, 0, err
	}
	before, err := svc.Store.LastSeq(ctx)
	if err != nil {
		return "", 0, 0, errors.Join(err, svc.Store.Close())
	}
	serveCtx, stop := context.WithCancel(ctx)
	urls, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- svc.Serve(serveCtx, "127.0.0.1:0", func(u string) { urls <- u }) }()
	select {
	case url = <-urls:
	case err := <-done:
		stop()
		return "", 0, 0, err
	}
	sendErr := o.sendSpans(ctx, url)
	after, seqErr := svc.Store.LastSeq(ctx)
	stop()
	if err := errors.Join(sendErr, seqErr, <-done); err != nil {
		return url, 0, 0, err
	}
	if after-before != int64(o.spans) {
		return url, 0, 0, fmt.Errorf("the app sent %d spans, but the chain grew from seq %d to %d", o.spans, before, after)
	}
	return url, before + 1, after, nil
}

// sendSpans is the organization's app: it makes o.spans model calls' spans and exports
// them to the chain service at url, in one OTLP request.
func (o *demoOrg) sendSpans(ctx context.Context, url string) error {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", o.app))))
	tracer := tp.Tracer(o.app)
	for i := range o.spans {
		model := o.models[i%len(o.models)]
		end := time.Now()
		in, out := 200+mrand.IntN(1800), 50+mrand.IntN(600)
		_, span := tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(end.Add(-time.Duration(300+mrand.IntN(2000))*time.Millisecond)),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "chat"),
				attribute.String("gen_ai.system", o.system),
				attribute.String("gen_ai.request.model", model),
				attribute.Int("gen_ai.usage.input_tokens", in),
				attribute.Int("gen_ai.usage.output_tokens", out),
				attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}),
			))
		span.End(trace.WithTimestamp(end))
	}
	if err := tp.ForceFlush(ctx); err != nil {
		return errors.Join(fmt.Errorf("export spans over OTLP: %w", err), tp.Shutdown(ctx))
	}
	return tp.Shutdown(ctx)
}
