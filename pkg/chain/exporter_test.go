package chain_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// newTracer returns a tracer whose spans end in exp through a simple span processor.
func newTracer(t *testing.T, exp sdktrace.SpanExporter) trace.Tracer {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("cairn/chain/test")
}

// decodeBody decodes an entry's canonical body.
func decodeBody(t *testing.T, e *protocol.Entry) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(e.CanonicalBody, &body); err != nil {
		t.Fatalf("entry %d body: %v", e.Seq, err)
	}
	return body
}

func TestExporterSealsGenAISpansOnly(t *testing.T) {
	s := &chainSealer{}
	tracer := newTracer(t, chain.NewSpanExporter(s))
	ctx, root := tracer.Start(context.Background(), "handle request")
	_, llm := tracer.Start(ctx, "chat gpt-4o", trace.WithAttributes(attribute.String("gen_ai.request.model", "gpt-4o")))
	llm.End()
	_, db := tracer.Start(ctx, "SELECT", trace.WithAttributes(attribute.String("db.system", "sqlite")))
	db.End()
	_, embed := tracer.Start(ctx, "embeddings")
	embed.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", 7)) // set after start counts too
	embed.End()
	root.End()

	entries, batches := s.sealed()
	var names []string
	for _, e := range entries {
		names = append(names, e.SpanName)
	}
	if !reflect.DeepEqual(names, []string{"chat gpt-4o", "embeddings"}) || !reflect.DeepEqual(batches, []int{1, 1}) {
		t.Fatalf("sealed %q in batches %v, want the two gen_ai spans one at a time", names, batches)
	}
	verifyChain(t, entries)
}

func TestExporterBodyFields(t *testing.T) {
	s := &chainSealer{}
	tracer := newTracer(t, chain.NewSpanExporter(s))
	start := time.Unix(1795262401, 123456789)
	end := start.Add(850 * time.Millisecond)
	_, span := tracer.Start(context.Background(), "chat gpt-4o",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(
			attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.Bool("gen_ai.stream", true),
			attribute.Int64("gen_ai.usage.input_tokens", 12),
			attribute.Int64("big", math.MaxInt64),
			attribute.Float64("gen_ai.request.temperature", 0.25),
			attribute.Float64("nan", math.NaN()),
			attribute.Float64("inf", math.Inf(1)),
			attribute.Float64("ninf", math.Inf(-1)),
			attribute.Float64("huge", 1e20),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop", "length"}),
			attribute.BoolSlice("bools", []bool{true, false}),
			attribute.Int64Slice("ints", []int64{1, -2, 3}),
			attribute.Int64Slice("bigints", []int64{1, math.MinInt64}),
			attribute.Float64Slice("floats", []float64{0.5, -1.5}),
			attribute.Float64Slice("nanfloats", []float64{0.5, math.NaN()}),
			attribute.StringSlice("empty", []string{}),
			attribute.ByteSlice("bytes", []byte("hi")),
			attribute.Slice("mixed", attribute.StringValue("a"), attribute.Int64Value(1)),
			attribute.Map("map", attribute.String("k", "v"), attribute.Float64("x", math.Inf(1))),
		))
	span.SetStatus(codes.Error, "rate limited")
	span.End(trace.WithTimestamp(end))

	entries, _ := s.sealed()
	if len(entries) != 1 {
		t.Fatalf("sealed %d entries, want 1", len(entries))
	}
	sc := span.SpanContext()
	want := protocol.SpanBody{
		Name: "chat gpt-4o", Kind: "client", StatusCode: "ERROR", StatusDescription: "rate limited",
		StartTimeNS: start.UnixNano(), EndTimeNS: end.UnixNano(),
		TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(),
		Attributes: map[string]any{
			"gen_ai.request.model":           "gpt-4o",
			"gen_ai.stream":                  true,
			"gen_ai.usage.input_tokens":      int64(12),
			"big":                            "9223372036854775807",
			"gen_ai.request.temperature":     0.25,
			"nan":                            "NaN",
			"inf":                            "+Inf",
			"ninf":                           "-Inf",
			"huge":                           "100000000000000000000",
			"gen_ai.response.finish_reasons": []string{"stop", "length"},
			"bools":                          []bool{true, false},
			"ints":                           []int64{1, -2, 3},
			"bigints":                        []any{int64(1), "-9223372036854775808"},
			"floats":                         []float64{0.5, -1.5},
			"nanfloats":                      []any{0.5, "NaN"},
			"empty":                          []string{},
			"bytes":                          "aGk=",
			"mixed":                          []any{"a", int64(1)},
			"map":                            map[string]any{"k": "v", "x": "+Inf"},
		},
	}
	wantCanonical, err := want.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(entries[0].CanonicalBody); got != string(wantCanonical) {
		t.Fatalf("canonical body\n got %s\nwant %s", got, wantCanonical)
	}
	// The OpenTelemetry conversion by itself gives the same typed values.
	if got := chain.SpanBodyFromSpan(span.(sdktrace.ReadOnlySpan)); !reflect.DeepEqual(got, want) {
		t.Errorf("SpanBodyFromSpan\n got %#v\nwant %#v", got, want)
	}
	e := entries[0]
	if e.TraceID != want.TraceID || e.SpanID != want.SpanID || e.SpanKind != "client" || e.TimestampNS != "1795262401123456789" {
		t.Errorf("entry columns = %s %s %s %s", e.TraceID, e.SpanID, e.SpanKind, e.TimestampNS)
	}
	if len(e.TraceID) != 32 || len(e.SpanID) != 16 {
		t.Errorf("ids %q %q are not 32 and 16 hex", e.TraceID, e.SpanID)
	}
	verifyChain(t, entries)
}

func TestExporterKindsAndStatuses(t *testing.T) {
	s := &chainSealer{}
	tracer := newTracer(t, chain.NewSpanExporter(s, chain.AllSpans()))
	tests := []struct {
		kind     trace.SpanKind
		code     codes.Code
		desc     string
		wantKind string
		wantCode string
		wantDesc string
	}{
		{trace.SpanKindUnspecified, codes.Unset, "", "internal", "UNSET", ""}, // the SDK makes unspecified internal
		{trace.SpanKindInternal, codes.Ok, "", "internal", "OK", ""},
		{trace.SpanKindServer, codes.Error, "boom", "server", "ERROR", "boom"},
		{trace.SpanKindClient, codes.Ok, "ignored", "client", "OK", ""}, // the SDK keeps descriptions for errors only
		{trace.SpanKindProducer, codes.Unset, "", "producer", "UNSET", ""},
		{trace.SpanKindConsumer, codes.Error, "", "consumer", "ERROR", ""},
	}
	for _, tc := range tests {
		_, span := tracer.Start(context.Background(), "op", trace.WithSpanKind(tc.kind))
		span.SetStatus(tc.code, tc.desc)
		span.End()
	}
	entries, _ := s.sealed()
	if len(entries) != len(tests) {
		t.Fatalf("sealed %d entries, want %d", len(entries), len(tests))
	}
	for i, tc := range tests {
		body := decodeBody(t, entries[i])
		if body["kind"] != tc.wantKind || body["status_code"] != tc.wantCode || body["status_description"] != tc.wantDesc {
			t.Errorf("kind %v status %v: body has kind %v status %v %q, want %s %s %q", tc.kind, tc.code,
				body["kind"], body["status_code"], body["status_description"], tc.wantKind, tc.wantCode, tc.wantDesc)
		}
	}
	verifyChain(t, entries)
}
