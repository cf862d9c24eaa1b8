package otlp_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/cairn-dev/cairn/pkg/chain"
)

// nested returns a value holding a key-value list inside an array, depth levels deep.
func nested(depth int) *commonpb.AnyValue {
	v := &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "leaf"}}
	for i := 1; i < depth; i++ {
		if i%2 == 1 {
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{v}}}}
		} else {
			v = &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
				Values: []*commonpb.KeyValue{{Key: "k", Value: v}}}}}
		}
	}
	return v
}

// exportProtobuf posts spans as protobuf and returns the decoded response, failing unless
// it is a 200.
func exportProtobuf(t *testing.T, srv *httptest.Server, spans ...*tracepb.Span) ptraceotlp.ExportResponse {
	t.Helper()
	resp, out := post(t, srv, protoRequest(t, spans...), map[string]string{"Content-Type": protobufType})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != protobufType {
		t.Fatalf("%s %q: %q", resp.Status, resp.Header.Get("Content-Type"), out)
	}
	decoded := ptraceotlp.NewExportResponse()
	if err := decoded.UnmarshalProto(out); err != nil {
		t.Fatalf("response %q: %v", out, err)
	}
	return decoded
}

// TestInvalidSpansAreRejected sends each kind of invalid span between two valid ones: the
// valid ones are sealed in one call, and the response counts the invalid one and says why.
func TestInvalidSpansAreRejected(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*tracepb.Span)
		wantMsg string
	}{
		{"no trace id", func(s *tracepb.Span) { s.TraceId = nil }, "trace_id is all zeros"},
		{"zero trace id", func(s *tracepb.Span) { s.TraceId = make([]byte, 16) }, "trace_id is all zeros"},
		{"no span id", func(s *tracepb.Span) { s.SpanId = nil }, "span_id is all zeros"},
		{"empty name", func(s *tracepb.Span) { s.Name = "" }, "name is empty"},
		{"end before start", func(s *tracepb.Span) { s.EndTimeUnixNano = s.StartTimeUnixNano - 1 }, "end_time_ns 1795262400999999999 is before"},
		{"start beyond int64", func(s *tracepb.Span) { s.StartTimeUnixNano = math.MaxUint64 }, "beyond the year 2262"},
		{"end beyond int64", func(s *tracepb.Span) { s.EndTimeUnixNano = math.MaxInt64 + 1 }, "beyond the year 2262"},
		// The attributes object is level 1 of the body's nesting, so a value of 511 levels
		// reaches 512: the most a chain entry may have (TestRejectionMessage seals one).
		{"values nested one level too deep", func(s *tracepb.Span) {
			s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: "deep", Value: nested(512)})
		}, `attribute "deep": values nest the body deeper than 512 levels`},
		{"values nested far too deep", func(s *tracepb.Span) {
			s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: "deep", Value: nested(5000)})
		}, `attribute "deep": values nest the body deeper than 512 levels`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, sealer := newServer(t)
			bad := genAISpan("bad")
			tc.mutate(bad)
			resp := exportProtobuf(t, srv, genAISpan("first"), bad, genAISpan("last"))
			ps := resp.PartialSuccess()
			if ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "1 invalid spans were not sealed") ||
				!strings.Contains(ps.ErrorMessage(), tc.wantMsg) {
				t.Errorf("partial success %d %q, want 1 rejected because %q", ps.RejectedSpans(), ps.ErrorMessage(), tc.wantMsg)
			}
			calls, entries := sealer.sealed()
			if len(calls) != 1 || len(entries) != 2 || entries[0].SpanName != "first" || entries[1].SpanName != "last" {
				t.Fatalf("Seal calls %v sealed %d entries, want the valid two in one call", calls, len(entries))
			}
			verifyFull(t, sealer.store)
		})
	}
}

// TestRejectionMessage checks the counts and the error_message of a request with many
// rejected spans, and that values nested as deep as a chain entry allows are sealed (the
// store refuses the whole batch if one body nests deeper).
func TestRejectionMessage(t *testing.T) {
	srv, sealer := newServer(t)
	spans := []*tracepb.Span{genAISpan("ok 1")}
	for i := range 5 {
		s := genAISpan("unnamed")
		s.Name = strings.Repeat("x", i+1)
		s.EndTimeUnixNano = 0
		spans = append(spans, s)
	}
	plain := genAISpan("GET /health")
	plain.Attributes = []*commonpb.KeyValue{{Key: "http.route", Value: &commonpb.AnyValue{}}}
	deepOK := genAISpan("ok 2")
	deepOK.Attributes = append(deepOK.Attributes, &commonpb.KeyValue{Key: "deep", Value: nested(511)})
	spans = append(spans, plain, plain, deepOK)

	resp := exportProtobuf(t, srv, spans...)
	ps := resp.PartialSuccess()
	msg := ps.ErrorMessage()
	if ps.RejectedSpans() != 7 || !strings.HasPrefix(msg, "2 spans carry no gen_ai.* or bijotel.mcp.* attribute and were not sealed; 5 invalid spans were not sealed: ") ||
		!strings.Contains(msg, `"x"`) || !strings.Contains(msg, `"xxx"`) || strings.Contains(msg, `"xxxx"`) || !strings.HasSuffix(msg, "; and 2 more") {
		t.Errorf("partial success %d %q", ps.RejectedSpans(), msg)
	}
	calls, entries := sealer.sealed()
	if len(calls) != 1 || len(entries) != 2 || entries[0].SpanName != "ok 1" || entries[1].SpanName != "ok 2" {
		t.Fatalf("Seal calls %v sealed %d entries, want ok 1 and ok 2 in one call", calls, len(entries))
	}
	verifyFull(t, sealer.store)
}

// TestEmptyRequest accepts a request without spans: 200, nothing sealed, no Seal call.
func TestEmptyRequest(t *testing.T) {
	srv, sealer := newServer(t)
	for _, tc := range []struct{ contentType, body string }{{protobufType, ""}, {jsonType, "{}"}} {
		resp, out := post(t, srv, []byte(tc.body), map[string]string{"Content-Type": tc.contentType})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tc.contentType {
			t.Fatalf("%s: %s %q", tc.contentType, resp.Status, out)
		}
		if tc.contentType == protobufType && len(out) != 0 {
			t.Errorf("a full success answers an empty ExportTraceServiceResponse, got %q", out)
		}
	}
	if calls, _ := sealer.sealed(); len(calls) != 0 {
		t.Fatalf("Seal calls %v for empty requests", calls)
	}
}

// TestSpanWithoutCanonicalForm sends a span whose attribute keys differ only in invalid
// UTF-8, which JSON encoding turns into the same key: it has no canonical form, so the
// first Seal call refuses the whole batch; the handler then rejects that span and seals
// the others, including a span with a lone invalid-UTF-8 key (sealed as U+FFFD, as the SDK
// path seals it). The SDK path refuses the colliding span too.
func TestSpanWithoutCanonicalForm(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, keys := range [][]string{{"gen_ai.ok"}, {"gen_ai.x\xff", "gen_ai.x\xfe"}, {"gen_ai.y\xff"}, {"gen_ai.ok"}} {
		span := spans.AppendEmpty()
		span.SetName(fmt.Sprintf("span %d", i))
		span.SetTraceID(pcommon.TraceID{1, 15: byte(i)})
		span.SetSpanID(pcommon.SpanID{1, 7: byte(i)})
		for _, k := range keys {
			span.Attributes().PutStr(k, "v")
		}
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	srv, sealer := newServer(t)
	resp, out := post(t, srv, body, map[string]string{"Content-Type": protobufType})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %q", resp.Status, out)
	}
	decoded := ptraceotlp.NewExportResponse()
	if err := decoded.UnmarshalProto(out); err != nil {
		t.Fatal(err)
	}
	if ps := decoded.PartialSuccess(); ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), `"span 1": attributes have no canonical JSON form`) {
		t.Errorf("partial success %d %q", ps.RejectedSpans(), ps.ErrorMessage())
	}
	calls, entries := sealer.sealed()
	if len(calls) != 2 || calls[0] != 4 || calls[1] != 3 || len(entries) != 3 ||
		entries[0].SpanName != "span 0" || entries[1].SpanName != "span 2" || entries[2].SpanName != "span 3" {
		t.Fatalf("Seal calls %v sealed %d entries; want a refused call of 4, then spans 0, 2 and 3", calls, len(entries))
	}
	if !strings.Contains(string(entries[1].CanonicalBody), "\"gen_ai.y\uFFFD\":\"v\"") {
		t.Errorf("span 2 body %s", entries[1].CanonicalBody)
	}
	verifyFull(t, sealer.store)

	direct := &recordingSealer{store: openStore(t, testSecret)}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, span := tp.Tracer("test").Start(context.Background(), "span 1",
		trace.WithAttributes(attribute.String("gen_ai.x\xff", "v"), attribute.String("gen_ai.x\xfe", "v")))
	span.End()
	if err := chain.NewSpanExporter(direct).ExportSpans(context.Background(), rec.Ended()); !errors.Is(err, chain.ErrInvalidSpan) {
		t.Fatalf("the SDK path: %v, want ErrInvalidSpan", err)
	}
}
