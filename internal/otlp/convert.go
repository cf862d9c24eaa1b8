package otlp

import (
	"encoding/hex"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if start > math.MaxInt64 || end > math.MaxInt64 {
		return protocol.SpanBody{}, fmt.Errorf("start or end time (%d, %d ns) is beyond the year 2262", start, end)
	}
	attrs, err := attributeMap(span.Attributes(), 1)
	if err != nil {
		return protocol.SpanBody{}, err
	}
	// Both ids in one string, one allocation rather than two.
	traceID, spanID := span.TraceID(), span.SpanID()
	var idHex [2*len(traceID) + 2*len(spanID)]byte
	hex.Encode(idHex[:], traceID[:])
	hex.Encode(idHex[2*len(traceID):], spanID[:])
	ids := string(idHex[:])
	status := span.Status()
	return protocol.SpanBody{
		Name:              span.Name(),
		Kind:              chain.SpanKindName(sdkKind(span.Kind())),
		Attributes:        attrs,
		StatusCode:        chain.StatusCodeName(sdkStatus(status.Code())),
		StatusDescription: status.Message(),
		StartTimeNS:       int64(start),
		EndTimeNS:         int64(end),
		TraceID:           ids[:2*len(traceID)],
		SpanID:            ids[2*len(traceID):],
	}, nil
}

// attributeMap converts the attributes m to the map chain.AttributeMap makes of the
// OpenTelemetry Go values the SDK's OTLP exporter sends as them, directly, without those
// values in between (a test compares the two ways over every value type). A repeated
// key keeps its last value, as chain.AttributeMap keeps it. depth is the nesting level of
// m in the body (see protocol.MaxBodyNesting): 1 for a span's attributes.
func attributeMap(m pcommon.Map, depth int) (map[string]any, error) {
	out := make(map[string]any, m.Len())
	for k, v := range m.All() {
		jv, err := attributeValue(v, depth+1)
		if err != nil {
			if depth == 1 {
				err = fmt.Errorf("attribute %s: %w", protocol.Quote(k), err)
			}
			return nil, err
		}
		out[k] = jv
	}
	return out, nil
}

// attributeValue is the value chain.AttributeMap seals for the OpenTelemetry Go value the
// SDK's OTLP exporter sends as v: a string or bool as itself, an int64 or float64 as
// chain.AttributeInt or chain.AttributeFloat holds it, bytes as chain.AttributeBytes
// does, an array as a []any (the SDK's typed slices travel as arrays, and seal alike), a
// key-value list as a map, and an empty value as nil. depth is v's nesting level in the
// body (see protocol.MaxBodyNesting).
func attributeValue(v pcommon.Value, depth int) (any, error) {
	// protocol.CheckEntry, which the store runs on every entry it seals, refuses a body
	// nested deeper, and so does SpanBody.Canonical; but collect leaves the canonical form
	// to the store (see checkFields), which would then refuse the whole batch. Refused
	// here, the span is rejected alone.
	if depth > protocol.MaxBodyNesting {
		return nil, fmt.Errorf("values nest the body deeper than %d levels", protocol.MaxBodyNesting)
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str(), nil
	case pcommon.ValueTypeBool:
		return v.Bool(), nil
	case pcommon.ValueTypeInt:
		return chain.AttributeInt(v.Int()), nil
	case pcommon.ValueTypeDouble:
		return chain.AttributeFloat(v.Double()), nil
	case pcommon.ValueTypeBytes:
		return chain.AttributeBytes(v.Bytes().AsRaw()), nil
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		out := make([]any, s.Len())
		for i := range out {
			var err error
			if out[i], err = attributeValue(s.At(i), depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case pcommon.ValueTypeMap:
		return attributeMap(v.Map(), depth)
	default: // pcommon.ValueTypeEmpty
		return nil, nil
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
