package otlp

import (
	"encoding/hex"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// HasGenAIAttribute reports whether attrs has a key starting with "gen_ai." or
// "bijotel.mcp." (chain.IsGenAIKey): the OTLP counterpart of chain.HasGenAIAttribute, and
// the handler's default filter.
func HasGenAIAttribute(attrs pcommon.Map) bool {
	found := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		found = chain.IsGenAIKey(k)
		return !found
	})
	return found
}

// SpanBody converts an OTLP span to the body chain.SpanBodyFromSpan builds for the same
// span in the OpenTelemetry Go SDK. It does not validate the result beyond what the
// conversion itself needs: it fails only for a timestamp beyond the int64 range and for
// attribute values nested deeper than a chain entry may hold (511 levels, a scalar being
// one). Use chain.ValidateSpanBody on the result before sealing it.
func SpanBody(span ptrace.Span) (protocol.SpanBody, error) {
	var c converter
	return c.spanBody(span)
}

// converter converts spans one after another, reusing its buffer of attributes from one
// span to the next. It is not safe for concurrent use.
type converter struct {
	kvs []attribute.KeyValue
}

// spanBody is SpanBody with c's buffer.
func (c *converter) spanBody(span ptrace.Span) (protocol.SpanBody, error) {
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if start > math.MaxInt64 || end > math.MaxInt64 {
		return protocol.SpanBody{}, fmt.Errorf("start or end time (%d, %d ns) is beyond the year 2262", start, end)
	}
	kvs, err := appendKeyValues(c.kvs[:0], span.Attributes(), 1)
	c.kvs = kvs[:0]
	if err != nil {
		return protocol.SpanBody{}, err
	}
	traceID, spanID := span.TraceID(), span.SpanID()
	status := span.Status()
	return protocol.SpanBody{
		Name:              span.Name(),
		Kind:              chain.SpanKindName(sdkKind(span.Kind())),
		Attributes:        chain.AttributeMap(kvs),
		StatusCode:        chain.StatusCodeName(sdkStatus(status.Code())),
		StatusDescription: status.Message(),
		StartTimeNS:       int64(start),
		EndTimeNS:         int64(end),
		TraceID:           hex.EncodeToString(traceID[:]),
		SpanID:            hex.EncodeToString(spanID[:]),
	}, nil
}

// appendKeyValues appends the attributes of m to kvs as the OpenTelemetry Go SDK holds
// them, in order (a repeated key is kept repeated; chain.AttributeMap keeps its last
// value). depth is the nesting level of m in the body (see protocol.MaxBodyNesting): 1 for a span's
// attributes.
func appendKeyValues(kvs []attribute.KeyValue, m pcommon.Map, depth int) ([]attribute.KeyValue, error) {
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		var sv attribute.Value
		if sv, err = sdkValue(v, depth+1); err != nil {
			if depth == 1 {
				err = fmt.Errorf("attribute %q: %w", k, err)
			}
			return false
		}
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: sv})
		return true
	})
	return kvs, err
}

// sdkValue is the OpenTelemetry Go value the SDK's OTLP exporter sends as v: a string,
// bool, int64, float64 or byte slice as itself, an array as a slice of values (the SDK's
// typed slices travel as arrays, and seal alike), a key-value list as a map, and an empty
// value as the empty Value. depth is v's nesting level in the body (see protocol.MaxBodyNesting).
func sdkValue(v pcommon.Value, depth int) (attribute.Value, error) {
	// protocol.CheckEntry, which the store runs on every entry it seals, refuses a body
	// nested deeper, and so does SpanBody.Canonical; but collect leaves the canonical form
	// to the store (see checkFields), which would then refuse the whole batch. Refused
	// here, the span is rejected alone.
	if depth > protocol.MaxBodyNesting {
		return attribute.Value{}, fmt.Errorf("values nest the body deeper than %d levels", protocol.MaxBodyNesting)
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return attribute.StringValue(v.Str()), nil
	case pcommon.ValueTypeBool:
		return attribute.BoolValue(v.Bool()), nil
	case pcommon.ValueTypeInt:
		return attribute.Int64Value(v.Int()), nil
	case pcommon.ValueTypeDouble:
		return attribute.Float64Value(v.Double()), nil
	case pcommon.ValueTypeBytes:
		return attribute.ByteSliceValue(v.Bytes().AsRaw()), nil
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		vs := make([]attribute.Value, s.Len())
		for i := range vs {
			var err error
			if vs[i], err = sdkValue(s.At(i), depth+1); err != nil {
				return attribute.Value{}, err
			}
		}
		return attribute.SliceValue(vs...), nil
	case pcommon.ValueTypeMap:
		kvs, err := appendKeyValues(nil, v.Map(), depth)
		if err != nil {
			return attribute.Value{}, err
		}
		return attribute.MapValue(kvs...), nil
	default: // pcommon.ValueTypeEmpty
		return attribute.Value{}, nil
	}
}

// sdkKind is the Go SDK's span kind for an OTLP span kind; any value OTLP does not define
// is SpanKindUnspecified.
func sdkKind(k ptrace.SpanKind) trace.SpanKind {
	switch k {
	case ptrace.SpanKindInternal:
		return trace.SpanKindInternal
	case ptrace.SpanKindServer:
		return trace.SpanKindServer
	case ptrace.SpanKindClient:
		return trace.SpanKindClient
	case ptrace.SpanKindProducer:
		return trace.SpanKindProducer
	case ptrace.SpanKindConsumer:
		return trace.SpanKindConsumer
	default:
		return trace.SpanKindUnspecified
	}
}

// sdkStatus is the Go SDK's status code for an OTLP status code (the two number them
// differently); any value OTLP does not define is Unset.
func sdkStatus(c ptrace.StatusCode) codes.Code {
	switch c {
	case ptrace.StatusCodeOk:
		return codes.Ok
	case ptrace.StatusCodeError:
		return codes.Error
	default:
		return codes.Unset
	}
}
