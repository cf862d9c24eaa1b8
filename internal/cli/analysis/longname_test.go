package analysis

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/keygen"
)

// TestLongEscapedSpanNameRoundTrips is the end-to-end test of issue 14's hole 2: a span
// name of 2 MiB full of characters JSON must escape, sent by the OpenTelemetry SDK over
// OTLP/HTTP to `cairn serve`, is sealed, exported and verified with the secret and the
// public key, and the export carries the name exactly as sent. Before the fix the export
// reader left escapes outside the closing quote's read chunk undecoded, and
// verify-export failed with column_mismatch.
func TestLongEscapedSpanNameRoundTrips(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "chain.db")
	keys := filepath.Join(dir, "keys")
	if _, err := runCairn(t, "keygen", "--output-dir", keys); err != nil {
		t.Fatal(err)
	}
	// Backslashes, control characters, HTML characters, U+2028 and non-ASCII in the first
	// half MiB, then 1.5 MiB that need no escape: the old reader, reading through the
	// CLI's 1 MiB buffer, looked for escapes only in the chunk with the closing quote. (No
	// quote: an escaped quote ended a chunk and hid the bug.)
	unit := "line\n\ttab\\back\\slash\x01<tag>&\u2028é日本 "
	name := strings.Repeat(unit, (512<<10)/len(unit)) + strings.Repeat("x", 3<<19)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	base, done := startServe(t, ctx, "--db", db, "--secret-hex", testSecretHex)
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(base+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(time.Hour)))
	_, span := tp.Tracer("cairn/longname/test").Start(ctx, name)
	span.SetAttributes(attribute.String("gen_ai.request.model", "gpt-4o"))
	span.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatalf("OTLP export of a 2 MiB span name: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cairn serve: %v", err)
	}

	export := filepath.Join(dir, "export.json")
	if out, err := runCairn(t, "export", "--db", db, "--secret-hex", testSecretHex,
		"--sign-key", filepath.Join(keys, keygen.PrivateKeyFile), "--output", export); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	out, err := runCairn(t, "verify-export", export, "--secret-hex", testSecretHex,
		"--public-key", filepath.Join(keys, "public.pem"))
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitOK || !strings.HasPrefix(out, "valid: ") {
		t.Fatalf("verify-export: exit %d (%v)\n%.2000s", code, err, out)
	}

	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Entries []struct {
			SpanName string `json:"span_name"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Entries) != 1 || decoded.Entries[0].SpanName != name {
		t.Fatalf("the export does not carry the span name as sent (%d entries)", len(decoded.Entries))
	}
}
