package chain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// GenAIAttributePrefix is the prefix of the OpenTelemetry generative-AI semantic
// convention attributes. By default SpanExporter seals only spans that carry one, or one
// starting with MCPAttributePrefix.
const GenAIAttributePrefix = "gen_ai."

// MCPAttributePrefix is the prefix of the attributes the original product, BIJOTEL, sets
// on Model Context Protocol calls. Since its 2.13.3 it seals a span carrying one even
// without a gen_ai attribute; so do SpanExporter's and OTLP ingestion's default filters,
// so an app instrumented for it has the same spans sealed.
const MCPAttributePrefix = "bijotel.mcp."

// IsGenAIKey reports whether an attribute key marks a span the default filters seal: it
// starts with GenAIAttributePrefix or MCPAttributePrefix (case matters).
func IsGenAIKey(key string) bool {
	return strings.HasPrefix(key, GenAIAttributePrefix) || strings.HasPrefix(key, MCPAttributePrefix)
}

// SpanExporter is an OpenTelemetry SDK span exporter that seals spans into a chain. Each
// span that passes the filter becomes one protocol.SpanBody:
//
//   - name: the span name; kind: "internal", "server", "client", "producer" or
//     "consumer", and "unspecified" for any other kind;
//   - status_code: "UNSET", "OK" or "ERROR"; status_description as the SDK kept it;
//   - start_time_ns, end_time_ns: the span's times in Unix nanoseconds;
//   - trace_id, span_id: lowercase hex;
//   - attributes: an object keyed by attribute key. Strings, bools, int64s and float64s,
//     and slices of them, keep their natural JSON types. Where JSON, or Cairn's canonical
//     JSON, cannot hold a value exactly it is sealed as a string instead: the non-finite
//     floats as "NaN", "+Inf" and "-Inf" (JSON has no such numbers), an integer beyond
//     ±(2^53−1) as its decimal digits, and a float of magnitude between 2^53−1 and 1e21
//     as its exact decimal integer (canonical JSON refuses both rather than round them).
//     Byte slices are sealed as base64 strings, heterogeneous slices as arrays, maps as
//     objects (a key given twice keeps its last value), and empty values as null.
//
// Resource, instrumentation scope, events and links are not sealed. Spans that fail
// [ValidateSpanBody] (a name that is empty or not UTF-8, an end before the start) are left
// out of the batch and reported in ExportSpans' error; the others are still sealed.
//
// A SpanExporter is safe for concurrent use if its Sealer is. Shutdown does not close the
// Sealer, which belongs to the caller.
type SpanExporter struct {
	sealer  Sealer
	filter  func(sdktrace.ReadOnlySpan) bool
	stopped atomic.Bool
}

var _ sdktrace.SpanExporter = (*SpanExporter)(nil)

// ExporterOption configures a SpanExporter.
type ExporterOption func(*SpanExporter)

// WithFilter seals only the spans for which keep returns true, in place of the default
// filter, HasGenAIAttribute. A nil keep seals every span.
func WithFilter(keep func(sdktrace.ReadOnlySpan) bool) ExporterOption {
	return func(e *SpanExporter) { e.filter = keep }
}

// AllSpans seals every span the exporter is given.
func AllSpans() ExporterOption {
	return WithFilter(nil)
}

// NewSpanExporter returns an exporter that seals spans through s.
func NewSpanExporter(s Sealer, opts ...ExporterOption) *SpanExporter {
	e := &SpanExporter{sealer: s, filter: HasGenAIAttribute}
	for _, opt := range opts {
		opt(e)
	}
	return e
}

// HasGenAIAttribute reports whether span carries an attribute whose key starts with
// "gen_ai." or "bijotel.mcp." (IsGenAIKey): the exporter's default filter.
func HasGenAIAttribute(span sdktrace.ReadOnlySpan) bool {
	for _, kv := range span.Attributes() {
		if IsGenAIKey(string(kv.Key)) {
			return true
		}
	}
	return false
}

// ExportSpans seals the spans that pass the filter, in the order given, with one Seal
// call, so they become consecutive entries or none do. Nothing is sealed when no span
// passes. It returns ctx's error if ctx is done before sealing, ErrExporterShutdown after
// Shutdown, the Sealer's error wrapped, and an error wrapping ErrInvalidSpan for spans it
// left out.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.stopped.Load() {
		return ErrExporterShutdown
	}
	if e.sealer == nil {
		return errors.New("chain: span exporter has no sealer")
	}
	bodies := make([]protocol.SpanBody, 0, len(spans))
	var invalid []error
	for _, span := range spans {
		if e.filter != nil && !e.filter(span) {
			continue
		}
		body := SpanBodyFromSpan(span)
		if err := ValidateSpanBody(body); err != nil {
			invalid = append(invalid, err)
			continue
		}
		bodies = append(bodies, body)
	}
	var sealErr error
	if len(bodies) > 0 {
		if _, err := e.sealer.Seal(ctx, bodies); err != nil {
			sealErr = fmt.Errorf("chain: seal %d spans: %w", len(bodies), err)
		}
	}
	return errors.Join(append([]error{sealErr}, invalid...)...)
}

// Shutdown stops the exporter: later ExportSpans calls return ErrExporterShutdown. An
// export already under way completes. It returns ctx's error if ctx is already done; the
// exporter is stopped either way.
func (e *SpanExporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	return ctx.Err()
}

// SpanBodyFromSpan converts an OpenTelemetry span to the body the exporter seals for it,
// by the rules given for SpanExporter. It does not validate the result.
func SpanBodyFromSpan(span sdktrace.ReadOnlySpan) protocol.SpanBody {
	sc := span.SpanContext()
	status := span.Status()
	return protocol.SpanBody{
		Name:              span.Name(),
		Kind:              kindName(span.SpanKind()),
		Attributes:        attributeMap(span.Attributes()),
		StatusCode:        statusName(status.Code),
		StatusDescription: status.Description,
		StartTimeNS:       span.StartTime().UnixNano(),
		EndTimeNS:         span.EndTime().UnixNano(),
		TraceID:           sc.TraceID().String(),
		SpanID:            sc.SpanID().String(),
	}
}

// kindName is the lower-case name of an OpenTelemetry span kind.
func kindName(k trace.SpanKind) string {
	switch k {
	case trace.SpanKindInternal:
		return "internal"
	case trace.SpanKindServer:
		return "server"
	case trace.SpanKindClient:
		return "client"
	case trace.SpanKindProducer:
		return "producer"
	case trace.SpanKindConsumer:
		return "consumer"
	default:
		return "unspecified"
	}
}

// statusName is the upper-case name of an OpenTelemetry status code.
func statusName(c codes.Code) string {
	switch c {
	case codes.Ok:
		return "OK"
	case codes.Error:
		return "ERROR"
	default:
		return "UNSET"
	}
}
