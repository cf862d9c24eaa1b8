package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// sdkExporter returns the OpenTelemetry Go SDK's OTLP/HTTP exporter sending to srv, without
// retries, so that every error reaches the test.
func sdkExporter(t *testing.T, url string, opts ...otlptracehttp.Option) sdktrace.SpanExporter {
	t.Helper()
	opts = append([]otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(url + "/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}, opts...)
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

// encodings are the ways the SDK's exporter can send a request.
var encodings = []struct {
	name string
	opts []otlptracehttp.Option
}{
	{"protobuf", nil},
	{"protobuf+gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
	{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}},
	{"json+gzip", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
}

// TestSDKExporterSealsGenAISpans sends spans through a TracerProvider with a batch span
// processor and the SDK's OTLP/HTTP exporter to the handler: the gen_ai spans land in the
// chain, in one Seal call, in order, with their attributes; the other span is reported
// rejected; the chain verifies.
func TestSDKExporterSealsGenAISpans(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			srv, sealer := newServer(t)
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(sdkExporter(t, srv.URL, enc.opts...),
				sdktrace.WithBatchTimeout(time.Hour)))
			ctx := context.Background()
			tracer := tp.Tracer("cairn/otlp/test")
			for i, model := range []string{"gpt-4o", "claude-sonnet", "llama-3"} {
				_, span := tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient))
				span.SetAttributes(
					attribute.String("gen_ai.request.model", model),
					attribute.Int("gen_ai.usage.input_tokens", 10*(i+1)),
					attribute.Float64("gen_ai.request.temperature", 0.5),
					attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}),
				)
				if i == 1 {
					span.SetStatus(codes.Error, "rate limited")
				}
				span.End()
				if i == 0 {
					_, plain := tracer.Start(ctx, "GET /health") // no gen_ai attribute
					plain.End()
				}
			}
			err := tp.ForceFlush(ctx)
			if err == nil || !strings.Contains(err.Error(), "1 spans rejected") ||
				!strings.Contains(err.Error(), "no gen_ai.* or bijotel.mcp.* attribute") {
				t.Fatalf("flush: %v, want a partial success rejecting the one span without gen_ai attributes", err)
			}
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}

			calls, entries := sealer.sealed()
			if len(calls) != 1 || calls[0] != 3 {
				t.Fatalf("Seal calls %v, want one call of 3 bodies", calls)
			}
			if n := verifyFull(t, sealer.store); n != 3 {
				t.Fatalf("full verify checked %d entries, want 3", n)
			}
			for i, model := range []string{"gpt-4o", "claude-sonnet", "llama-3"} {
				e := entries[i]
				var body struct {
					protocol.SpanBody
					StartTimeNS string `json:"start_time_ns"`
					EndTimeNS   string `json:"end_time_ns"`
				}
				if err := json.Unmarshal(e.CanonicalBody, &body); err != nil {
					t.Fatal(err)
				}
				wantStatus, wantDesc := "UNSET", ""
				if i == 1 {
					wantStatus, wantDesc = "ERROR", "rate limited"
				}
				attrs := body.Attributes
				if e.Seq != int64(i+1) || body.Name != "chat "+model || body.Kind != "client" ||
					body.StatusCode != wantStatus || body.StatusDescription != wantDesc ||
					attrs["gen_ai.request.model"] != model || attrs["gen_ai.usage.input_tokens"] != float64(10*(i+1)) ||
					attrs["gen_ai.request.temperature"] != 0.5 || len(attrs) != 4 {
					t.Errorf("entry %d: body %s", e.Seq, e.CanonicalBody)
				}
				if reasons, _ := attrs["gen_ai.response.finish_reasons"].([]any); len(reasons) != 1 || reasons[0] != "stop" {
					t.Errorf("entry %d: finish_reasons %v", e.Seq, attrs["gen_ai.response.finish_reasons"])
				}
			}
		})
	}
}

// recordSpans records ended spans of many shapes from the Go SDK: every attribute type
// and edge value (an empty byte slice only if emptyBytes), every kind, each status, an event (not sealed), and resource attributes
// (not sealed either, whichever way the span travels).
func recordSpans(t *testing.T, emptyBytes bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(
		resource.NewSchemaless(attribute.String("service.name", "billing"), attribute.String("gen_ai.system", "openai"))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("cairn/otlp/equivalence")
	start := time.Unix(1795262401, 123456789)
	ctx := context.Background()

	_, span := tracer.Start(ctx, "chat gpt-4o", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(
			attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.String("prompt", "héllo \"world\"\n<tag> & \u2028 😀"),
			attribute.Bool("gen_ai.stream", true),
			attribute.Int64("gen_ai.usage.input_tokens", 12),
			attribute.Int64("zero", 0),
			attribute.Int64("max safe", 1<<53-1),
			attribute.Int64("big", math.MaxInt64),
			attribute.Int64("small", math.MinInt64),
			attribute.Float64("gen_ai.request.temperature", 0.25),
			attribute.Float64("neg zero", math.Copysign(0, -1)),
			attribute.Float64("nan", math.NaN()),
			attribute.Float64("inf", math.Inf(1)),
			attribute.Float64("ninf", math.Inf(-1)),
			attribute.Float64("huge", 1e20),
			attribute.Float64("enormous", 1e300),
			attribute.Float64("tiny", 5e-324),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop", "length"}),
			attribute.StringSlice("no strings", []string{}),
			attribute.BoolSlice("bools", []bool{true, false}),
			attribute.Int64Slice("ints", []int64{1, -2, 3}),
			attribute.Int64Slice("big ints", []int64{1, math.MaxInt64}),
			attribute.Int64Slice("no ints", nil),
			attribute.Float64Slice("floats", []float64{0.5, -1.25}),
			attribute.Float64Slice("odd floats", []float64{1, math.NaN(), math.Inf(-1), 3e19}),
			attribute.ByteSlice("bytes", []byte{0, 1, 2, 0xfe, 0xff}),
			attribute.Slice("mixed", attribute.StringValue("a"), attribute.Int64Value(1), attribute.BoolValue(true),
				attribute.Float64Value(math.NaN()), attribute.SliceValue(attribute.Int64Value(math.MinInt64)),
				attribute.Value{}),
			attribute.Slice("no values"),
			attribute.Map("map", attribute.String("z", "last"), attribute.Int("a", 1),
				attribute.Map("inner", attribute.Float64("f", math.Inf(1)))),
			attribute.Map("no members"),
			attribute.KeyValue{Key: "empty", Value: attribute.Value{}},
		))
	if emptyBytes {
		span.SetAttributes(attribute.ByteSlice("no bytes", nil))
	}
	span.AddEvent("token", trace.WithAttributes(attribute.Int("n", 1)))
	span.SetStatus(codes.Ok, "")
	span.End(trace.WithTimestamp(start.Add(850 * time.Millisecond)))

	kinds := []trace.SpanKind{trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindProducer, trace.SpanKindConsumer}
	for i, kind := range kinds {
		_, s := tracer.Start(ctx, "embeddings", trace.WithSpanKind(kind), trace.WithTimestamp(start.Add(time.Duration(i)*time.Second)))
		s.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", i))
		if i%2 == 1 {
			s.SetStatus(codes.Error, "upstream 5xx: 😞")
		}
		s.End(trace.WithTimestamp(start.Add(time.Duration(i)*time.Second + time.Millisecond)))
	}
	_, plain := tracer.Start(ctx, "GET /health") // no gen_ai attribute
	plain.End()
	return rec.Ended()
}

// TestOTLPAndSDKExporterSealIdenticalBodies seals the same SDK spans two ways, through
// chain.SpanExporter directly and through the SDK's OTLP/HTTP exporter and the handler,
// into two chains with the same secret: every canonical body, and so every entry, is
// identical, with the default filter and with every span taken.
func TestOTLPAndSDKExporterSealIdenticalBodies(t *testing.T) {
	ctx := context.Background()
	for _, enc := range encodings {
		for _, all := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all=%v", enc.name, all), func(t *testing.T) {
				// The SDK's JSON encoder leaves an empty byte slice out (its bytesValue is
				// omitempty), so it sends an empty value there that no receiver can tell from
				// one: only protobuf carries that attribute through.
				spans := recordSpans(t, !strings.HasPrefix(enc.name, "json"))
				direct := &recordingSealer{store: openStore(t, testSecret)}
				var exporterOpts []chain.ExporterOption
				var handlerOpts []otlp.Option
				if all {
					exporterOpts, handlerOpts = []chain.ExporterOption{chain.AllSpans()}, []otlp.Option{otlp.AllSpans()}
				}
				if err := chain.NewSpanExporter(direct, exporterOpts...).ExportSpans(ctx, spans); err != nil {
					t.Fatal(err)
				}
				_, want := direct.sealed()
				if wantN := len(spans) - 1; all && len(want) != len(spans) || !all && len(want) != wantN {
					t.Fatalf("the SDK path sealed %d of %d spans", len(want), len(spans))
				}

				srv, sealer := newServer(t, handlerOpts...)
				err := sdkExporter(t, srv.URL, enc.opts...).ExportSpans(ctx, spans)
				if all != (err == nil) { // the default filter rejects one span: a partial success
					t.Fatalf("export: %v", err)
				}
				_, got := sealer.sealed()
				if len(got) != len(want) {
					t.Fatalf("sealed %d entries over OTLP, %d through the SDK exporter", len(got), len(want))
				}
				for i := range want {
					if !bytes.Equal(got[i].CanonicalBody, want[i].CanonicalBody) || got[i].HMACHash != want[i].HMACHash {
						t.Errorf("entry %d differs:\nOTLP %s\nSDK  %s", i+1, got[i].CanonicalBody, want[i].CanonicalBody)
					}
				}
				verifyFull(t, sealer.store)
			})
		}
	}
}
