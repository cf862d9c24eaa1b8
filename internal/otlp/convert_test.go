package otlp_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/cairn-dev/cairn/internal/otlp"
)

func TestHasGenAIAttribute(t *testing.T) {
	for key, want := range map[string]bool{
		"gen_ai.request.model": true,
		"gen_ai.":              true,
		"gen_ai":               false,
		"GEN_AI.system":        false,
		"llm.gen_ai.model":     false,
		// The original product's MCP attributes: it seals those spans too (2.13.3 and later).
		"bijotel.mcp.tool.name":      true,
		"bijotel.mcp.":               true,
		"bijotel.mcp":                false,
		"BIJOTEL.mcp.tool":           false,
		"bijotel.replay.output_hash": false,
	} {
		m := pcommon.NewMap()
		m.PutStr("http.route", "/chat")
		m.PutInt(key, 1)
		if got := otlp.HasGenAIAttribute(m); got != want {
			t.Errorf("%q: %v, want %v", key, got, want)
		}
	}
	if otlp.HasGenAIAttribute(pcommon.NewMap()) {
		t.Error("an empty map has a gen_ai attribute")
	}
}

// TestKindAndStatusNames maps every OTLP span kind and status code, and values OTLP does
// not define, to the names the Go SDK path seals (whose status codes are numbered
// differently from OTLP's).
func TestKindAndStatusNames(t *testing.T) {
	kinds := map[ptrace.SpanKind]string{
		ptrace.SpanKindUnspecified: "unspecified",
		ptrace.SpanKindInternal:    "internal",
		ptrace.SpanKindServer:      "server",
		ptrace.SpanKindClient:      "client",
		ptrace.SpanKindProducer:    "producer",
		ptrace.SpanKindConsumer:    "consumer",
		ptrace.SpanKind(42):        "unspecified",
	}
	for kind, want := range kinds {
		span := ptrace.NewSpan()
		span.SetKind(kind)
		if body, err := otlp.SpanBody(span); err != nil || body.Kind != want {
			t.Errorf("kind %d: %q (%v), want %q", kind, body.Kind, err, want)
		}
	}
	codes := map[ptrace.StatusCode]string{
		ptrace.StatusCodeUnset: "UNSET",
		ptrace.StatusCodeOk:    "OK",
		ptrace.StatusCodeError: "ERROR",
		ptrace.StatusCode(7):   "UNSET",
	}
	for code, want := range codes {
		span := ptrace.NewSpan()
		span.Status().SetCode(code)
		span.Status().SetMessage("why")
		if body, err := otlp.SpanBody(span); err != nil || body.StatusCode != want || body.StatusDescription != "why" {
			t.Errorf("status %d: %q %q (%v), want %q", code, body.StatusCode, body.StatusDescription, err, want)
		}
	}
}

// TestSpanBodyIDsAndAttributes checks ids are lowercase hex, all-zero ids stay zeros (the
// handler refuses them), and a span without attributes gets an empty map.
func TestSpanBodyIDsAndAttributes(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetName("chat")
	body, err := otlp.SpanBody(span)
	if err != nil {
		t.Fatal(err)
	}
	if body.TraceID != "00000000000000000000000000000000" || body.SpanID != "0000000000000000" ||
		body.Attributes == nil || len(body.Attributes) != 0 {
		t.Fatalf("body %+v", body)
	}
	span.SetTraceID(pcommon.TraceID{0xAB, 0xCD, 15: 0xEF})
	span.SetSpanID(pcommon.SpanID{0xFF, 7: 0x01})
	span.Attributes().PutStr("k", "first")
	span.Attributes().PutEmpty("e")
	if body, err = otlp.SpanBody(span); err != nil {
		t.Fatal(err)
	}
	if body.TraceID != "abcd00000000000000000000000000ef" || body.SpanID != "ff00000000000001" ||
		body.Attributes["k"] != "first" || body.Attributes["e"] != nil || len(body.Attributes) != 2 {
		t.Fatalf("body %+v", body)
	}
}
