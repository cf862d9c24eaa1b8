package chain

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The conversion rules of SpanExporter, exported so that spans arriving by other routes
// (OTLP/HTTP, say) are sealed exactly as the same span would be from the Go SDK: map the
// incoming values to their OpenTelemetry Go types, then convert them with these.

// AttributeMap converts OpenTelemetry attributes to a span body's attributes map, by the
// rules given for [SpanExporter]. A key that occurs twice keeps its last value. Every value
// in the result is one canonical JSON holds exactly, except strings that are not valid
// UTF-8, which encoding them replaces with U+FFFD.
func AttributeMap(kvs []attribute.KeyValue) map[string]any {
	return attributeMap(kvs)
}

// SpanKindName is the name a span body gives kind k: "internal", "server", "client",
// "producer" or "consumer", and "unspecified" for any other value.
func SpanKindName(k trace.SpanKind) string {
	return kindName(k)
}

// StatusCodeName is the name a span body gives status code c: "OK", "ERROR", and "UNSET"
// for any other value.
func StatusCodeName(c codes.Code) string {
	return statusName(c)
}
