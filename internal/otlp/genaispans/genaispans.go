// Package genaispans builds OTLP traces of gen_ai chat spans as an instrumented
// application sends them: the one request shape the OTLP benchmarks, the load test and the
// soak send, so their figures measure the same thing.
package genaispans

import (
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Batch returns the n-th batch of a stream: count chat spans of service, the i-th
// starting at start + i ms and lasting 850 ms, each with its own trace and span ID (n
// and i make them) and the attributes a typical gen_ai instrumentation records.
func Batch(n, count int, service string, start uint64) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range count {
		span := spans.AppendEmpty()
		var id [16]byte
		binary.BigEndian.PutUint64(id[:8], uint64(n+1))
		binary.BigEndian.PutUint64(id[8:], uint64(i+1))
		span.SetTraceID(id)
		span.SetSpanID([8]byte(id[8:]))
		span.SetName("chat gpt-4o")
		span.SetKind(ptrace.SpanKindClient)
		at := start + uint64(i)*1e6
		span.SetStartTimestamp(pcommon.Timestamp(at))
		span.SetEndTimestamp(pcommon.Timestamp(at + 850e6))
		a := span.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.system", "openai")
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
		a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d-%d", n, i))
		a.PutDouble("gen_ai.request.temperature", 0.2)
		a.PutInt("gen_ai.request.max_tokens", 1024)
		a.PutInt("gen_ai.usage.input_tokens", int64(100+i))
		a.PutInt("gen_ai.usage.output_tokens", int64(200+i))
		a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
		a.PutStr("server.address", "api.example.invalid")
		span.Status().SetCode(ptrace.StatusCodeOk)
	}
	return td
}
