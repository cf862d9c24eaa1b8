package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestOpenTelemetrySpansLandInTheChain sends real spans through the OpenTelemetry Go SDK,
// with pkg/chain's exporter on a batch processor, into a SQLite chain, and reads them back.
func TestOpenTelemetrySpansLandInTheChain(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "chain.db"), testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(chain.NewSpanExporter(s), sdktrace.WithBatchTimeout(time.Hour)))
	tracer := tp.Tracer("cairn-test")

	for _, model := range []string{"gpt-4o", "claude-sonnet"} {
		_, span := tracer.Start(ctx, "chat "+model)
		span.SetAttributes(attribute.String("gen_ai.request.model", model), attribute.Int("gen_ai.usage.input_tokens", 42))
		span.End()
	}
	_, plain := tracer.Start(ctx, "GET /health") // no gen_ai attribute: not sealed
	plain.End()
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	st, err := s.Stats(ctx)
	if err != nil || st.Entries != 2 {
		t.Fatalf("chain has %d entries (%v), want the 2 gen_ai spans", st.Entries, err)
	}
	if _, err := s.Verify(ctx, VerifyOptions{Full: true}); err != nil {
		t.Fatalf("full verify: %v", err)
	}

	var export bytes.Buffer
	if _, err := s.Export(ctx, &export, ExportOptions{Key: testKey, ExportedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.VerifyExport(bytes.NewReader(export.Bytes()), protocol.VerifyOptions{
		Secret: testSecret, PublicKey: testKey.Public().(ed25519.PublicKey),
	}); err != nil {
		t.Fatalf("verify export: %v", err)
	}
	r := protocol.NewExportReader(&export)
	var names []string
	for {
		var e protocol.Entry
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.SpanName)
	}
	if len(names) != 2 || names[0] != "chat gpt-4o" || names[1] != "chat claude-sonnet" {
		t.Fatalf("sealed spans %q, want the two chat spans in order", names)
	}
}
