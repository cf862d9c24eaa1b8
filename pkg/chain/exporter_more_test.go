package chain_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
)

var genAI = trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"))

func TestExporterBatchProcessorSealsOneBatch(t *testing.T) {
	s := &chainSealer{}
	bsp := sdktrace.NewBatchSpanProcessor(chain.NewSpanExporter(s), sdktrace.WithBatchTimeout(time.Hour))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(bsp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("cairn/chain/test")
	for _, name := range []string{"call 1", "not ai", "call 2", "call 3"} {
		opts := []trace.SpanStartOption{genAI}
		if name == "not ai" {
			opts = nil
		}
		_, span := tracer.Start(context.Background(), name, opts...)
		span.End()
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, batches := s.sealed()
	var names []string
	for _, e := range entries {
		names = append(names, e.SpanName)
	}
	if !reflect.DeepEqual(names, []string{"call 1", "call 2", "call 3"}) || !reflect.DeepEqual(batches, []int{3}) {
		t.Fatalf("sealed %q in batches %v, want the three gen_ai spans in one Seal call", names, batches)
	}
	verifyChain(t, entries)
}

// endedSpans runs f with a tracer and returns the spans it ended, for calling the
// exporter directly.
func endedSpans(f func(trace.Tracer)) []sdktrace.ReadOnlySpan {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f(tp.Tracer("cairn/chain/test"))
	return rec.Ended()
}

func TestExporterFilters(t *testing.T) {
	spans := endedSpans(func(tr trace.Tracer) {
		for _, name := range []string{"plain", "llm"} {
			opts := []trace.SpanStartOption{}
			if name == "llm" {
				opts = append(opts, genAI)
			}
			_, span := tr.Start(context.Background(), name, opts...)
			span.End()
		}
		// A key that merely contains "gen_ai." does not count.
		_, span := tr.Start(context.Background(), "lookalike", trace.WithAttributes(attribute.Bool("x.gen_ai.y", true)))
		span.End()
		// The original product's MCP attributes mark a span it seals; its replay ones do not.
		_, span = tr.Start(context.Background(), "mcp", trace.WithAttributes(attribute.String("bijotel.mcp.tool.name", "search")))
		span.End()
		_, span = tr.Start(context.Background(), "replay only", trace.WithAttributes(attribute.Bool("bijotel.replay.deterministic", true)))
		span.End()
	})
	tests := []struct {
		name string
		opts []chain.ExporterOption
		want []string
	}{
		{"default", nil, []string{"llm", "mcp"}},
		{"all spans", []chain.ExporterOption{chain.AllSpans()}, []string{"plain", "llm", "lookalike", "mcp", "replay only"}},
		{"nil filter", []chain.ExporterOption{chain.WithFilter(nil)}, []string{"plain", "llm", "lookalike", "mcp", "replay only"}},
		{"custom", []chain.ExporterOption{chain.WithFilter(func(s sdktrace.ReadOnlySpan) bool { return s.Name() != "llm" })},
			[]string{"plain", "lookalike", "mcp", "replay only"}},
		{"none", []chain.ExporterOption{chain.WithFilter(func(sdktrace.ReadOnlySpan) bool { return false })}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &chainSealer{}
			if err := chain.NewSpanExporter(s, tc.opts...).ExportSpans(context.Background(), spans); err != nil {
				t.Fatal(err)
			}
			entries, batches := s.sealed()
			var names []string
			for _, e := range entries {
				names = append(names, e.SpanName)
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Fatalf("sealed %q, want %q", names, tc.want)
			}
			if len(tc.want) == 0 && len(batches) != 0 {
				t.Errorf("Seal called %d times with nothing to seal", len(batches))
			}
		})
	}
}

func TestExporterUnspecifiedKind(t *testing.T) {
	// The SDK records an unspecified kind as internal, so build the span directly.
	stub := tracetest.SpanStub{
		Name: "raw", SpanKind: trace.SpanKindUnspecified,
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}}),
		StartTime:   time.Unix(0, 5), EndTime: time.Unix(0, 5),
	}
	body := chain.SpanBodyFromSpan(stub.Snapshot())
	if body.Kind != "unspecified" || body.StatusCode != "UNSET" || body.TraceID != "01000000000000000000000000000000" || body.SpanID != "0200000000000000" {
		t.Errorf("body = %+v", body)
	}
	if body.StartTimeNS != 5 || body.EndTimeNS != 5 || len(body.Attributes) != 0 || body.Attributes == nil {
		t.Errorf("times %d %d, attributes %#v", body.StartTimeNS, body.EndTimeNS, body.Attributes)
	}
}

func TestExporterLeavesOutInvalidSpans(t *testing.T) {
	spans := endedSpans(func(tr trace.Tracer) {
		start := time.Unix(1795262401, 0)
		_, bad := tr.Start(context.Background(), "backwards", genAI, trace.WithTimestamp(start))
		bad.End(trace.WithTimestamp(start.Add(-time.Second)))
		_, good := tr.Start(context.Background(), "fine", genAI)
		good.End()
	})
	s := &chainSealer{}
	err := chain.NewSpanExporter(s).ExportSpans(context.Background(), spans)
	if !errors.Is(err, chain.ErrInvalidSpan) || !strings.Contains(err.Error(), "backwards") {
		t.Fatalf("error = %v, want ErrInvalidSpan naming the span", err)
	}
	entries, _ := s.sealed()
	if len(entries) != 1 || entries[0].SpanName != "fine" {
		t.Fatalf("sealed %d entries, want only the valid span", len(entries))
	}
	verifyChain(t, entries)
}

func TestExporterShutdownContextAndSealerErrors(t *testing.T) {
	spans := endedSpans(func(tr trace.Tracer) {
		_, span := tr.Start(context.Background(), "llm", genAI)
		span.End()
	})
	ctx := context.Background()

	s := &chainSealer{}
	exp := chain.NewSpanExporter(s)
	if err := exp.ExportSpans(ctx, spans); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, spans); !errors.Is(err, chain.ErrExporterShutdown) {
		t.Errorf("after Shutdown: error = %v, want ErrExporterShutdown", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if entries, _ := s.sealed(); len(entries) != 1 {
		t.Errorf("sealed %d entries, want 1 (none after Shutdown)", len(entries))
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	s = &chainSealer{}
	if err := chain.NewSpanExporter(s).ExportSpans(canceled, spans); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: error = %v, want context.Canceled", err)
	}
	if entries, _ := s.sealed(); len(entries) != 0 {
		t.Error("sealed with a canceled context")
	}
	if err := chain.NewSpanExporter(s).Shutdown(canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown with canceled context: error = %v", err)
	}

	if err := chain.NewSpanExporter(&chainSealer{err: errSealer}).ExportSpans(ctx, spans); !errors.Is(err, errSealer) {
		t.Errorf("sealer failure: error = %v, want it wrapped", err)
	}
	if err := chain.NewSpanExporter(nil).ExportSpans(ctx, spans); err == nil {
		t.Error("nil sealer: no error")
	}
}
