package chain_test

import (
	"context"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
)

// TestExportedConversionRules checks that the exported rules give what SpanBodyFromSpan
// seals for a real span, so other ingestion paths that use them seal alike.
func TestExportedConversionRules(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.Int64("big", 1<<60),
		attribute.Float64Slice("floats", []float64{0.5, 1e20}),
		attribute.Map("m", attribute.Int("k", 1), attribute.Int("k", 2)),
	}
	_, span := tp.Tracer("test").Start(context.Background(), "chat", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attrs...))
	span.SetStatus(codes.Error, "boom")
	span.End()
	body := chain.SpanBodyFromSpan(rec.Ended()[0])

	if got := chain.AttributeMap(attrs); !reflect.DeepEqual(got, body.Attributes) {
		t.Errorf("AttributeMap %#v, SpanBodyFromSpan %#v", got, body.Attributes)
	}
	if got := chain.SpanKindName(trace.SpanKindProducer); got != body.Kind || got != "producer" {
		t.Errorf("SpanKindName %q, body kind %q", got, body.Kind)
	}
	if got := chain.StatusCodeName(codes.Error); got != body.StatusCode || got != "ERROR" {
		t.Errorf("StatusCodeName %q, body status %q", got, body.StatusCode)
	}
	for k, want := range map[trace.SpanKind]string{trace.SpanKindUnspecified: "unspecified", trace.SpanKind(99): "unspecified"} {
		if got := chain.SpanKindName(k); got != want {
			t.Errorf("SpanKindName(%d) %q, want %q", k, got, want)
		}
	}
	for c, want := range map[codes.Code]string{codes.Unset: "UNSET", codes.Ok: "OK", codes.Code(99): "UNSET"} {
		if got := chain.StatusCodeName(c); got != want {
			t.Errorf("StatusCodeName(%d) %q, want %q", c, got, want)
		}
	}
}
