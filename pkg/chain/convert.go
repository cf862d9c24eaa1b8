package chain

import (
	"encoding/base64"

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

// AttributeInt is the value AttributeMap seals for an int64 attribute n: n itself, or its
// decimal string when canonical JSON cannot hold it exactly (beyond ±(2^53−1)).
func AttributeInt(n int64) any {
	return jsonInt(n)
}

// AttributeFloat is the value AttributeMap seals for a float64 attribute f: f itself, or a
// string when canonical JSON cannot hold it ("NaN", "+Inf", "-Inf", or the exact decimal
// integer for a magnitude above 2^53−1 and below 1e21).
func AttributeFloat(f float64) any {
	return jsonFloat(f)
}

// AttributeBytes is the value AttributeMap seals for a byte-slice attribute b: its
// standard base64 encoding, with padding.
func AttributeBytes(b []byte) string {
	return base64.StdEncoding.EncodeToString(b)
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
