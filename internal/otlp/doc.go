// Package otlp receives OpenTelemetry traces over OTLP/HTTP (POST /v1/traces) and seals
// their generative-AI spans into the chain.
//
// [Handler] accepts an ExportTraceServiceRequest in either OTLP/HTTP encoding: binary
// protobuf (Content-Type application/x-protobuf) or OTLP JSON (application/json: hex trace
// and span ids, lowerCamelCase field names, 64-bit integers as strings, enums as
// integers), optionally gzip-compressed (Content-Encoding: gzip). It answers with an
// ExportTraceServiceResponse in the request's encoding.
//
// Every span carrying an attribute whose key starts with "gen_ai." or "bijotel.mcp." (the
// original product's MCP attributes, which it seals too: [chain.IsGenAIKey]), or, with
// [AllSpans], every span, becomes one protocol.SpanBody, built exactly as
// chain.SpanBodyFromSpan builds it from the same span in the OpenTelemetry Go SDK:
// incoming values are converted by pkg/chain's own rules ([chain.AttributeMap] for the
// OpenTelemetry Go values the SDK would send as them, applied to the OTLP values directly
// with [chain.AttributeInt], [chain.AttributeFloat] and [chain.AttributeBytes];
// [chain.SpanKindName], [chain.StatusCodeName]), so a
// span sealed through OTLP and the same span sealed through chain.SpanExporter have the
// same canonical body, under the attribute names it arrived with. As on the SDK path,
// resource and instrumentation-scope attributes, events and links are not sealed: a body
// holds the span's own attributes only, whichever way it arrived.
//
// Each span is sealed once when the Sealer is a store.Store: the request's spans are sealed
// with store.Store.SealOnce, which skips a span whose trace_id and span_id the chain
// already holds with the same canonical_hash (the SHA-256 of the canonical body: the same
// content) and refuses one it holds with another, counted in rejected_spans and named in
// error_message. Repeats inside one request count the same way: the first is sealed.
//
// The accepted spans of one request are sealed with one Seal call, in request order, so
// they become consecutive entries or none do. (One exception, for speed: whether a body
// has a canonical form is left to the Sealer, which computes it anyway; if it refuses the
// batch for that reason, having sealed nothing, the offending spans are found, rejected,
// and the rest sealed with a second call.) Spans not sealed (no such attribute, a body
// chain.ValidateSpanBody refuses, attribute values nested deeper than a chain entry may
// hold, or an all-zero trace or span id, which OTLP calls invalid) are counted in the
// response's partial_success.rejected_spans, and its error_message says why.
package otlp
