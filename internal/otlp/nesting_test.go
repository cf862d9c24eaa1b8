package otlp_test

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/otlp"
)

// wireField is a length-delimited protobuf field: its tag byte (field number << 3 | 2),
// the length and the content.
func wireField(tag byte, content ...[]byte) []byte {
	body := bytes.Join(content, nil)
	return append(binary.AppendUvarint([]byte{tag}, uint64(len(body))), body...)
}

// deepProtobuf is an ExportTraceServiceRequest of one span whose attribute "gen_ai.deep" holds
// arrays in arrays depth levels deep, written straight in wire format (in linear time:
// the lengths first, then the bytes outside in).
func deepProtobuf(depth int) []byte {
	leaf := []byte{0x0a, 1, 'x'} // AnyValue{string_value: "x"}
	varintLen := func(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }
	value := make([]int, depth+1) // the AnyValue's size at each level
	array := make([]int, depth+1) // its ArrayValue's
	value[0] = len(leaf)
	for k := 1; k <= depth; k++ {
		array[k] = 1 + varintLen(value[k-1]) + value[k-1]
		value[k] = 1 + varintLen(array[k]) + array[k]
	}
	v := make([]byte, 0, value[depth])
	for k := depth; k >= 1; k-- {
		v = binary.AppendUvarint(append(v, 0x2a), uint64(array[k]))   // AnyValue.array_value
		v = binary.AppendUvarint(append(v, 0x0a), uint64(value[k-1])) // ArrayValue.values
	}
	v = append(v, leaf...)
	span := bytes.Join([][]byte{
		wireField(0x0a, bytes.Repeat([]byte{1}, 16)),                                // trace_id
		wireField(0x12, bytes.Repeat([]byte{2}, 8)),                                 // span_id
		wireField(0x2a, []byte("chat")),                                             // name
		wireField(0x4a, wireField(0x0a, []byte("gen_ai.deep")), wireField(0x12, v)), // attributes
	}, nil)
	return wireField(0x0a, wireField(0x12, wireField(0x12, span))) // resource_spans.scope_spans.spans
}

// deepJSON is the same request in OTLP JSON.
func deepJSON(depth int) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01010101010101010101010101010101",` +
		`"spanId":"0202020202020202","name":"chat","attributes":[{"key":"gen_ai.deep","value":` +
		strings.Repeat(`{"arrayValue":{"values":[`, depth) + `{"stringValue":"x"}` + strings.Repeat(`]}}`, depth) +
		`}]}]}]}]}`)
}

// TestDeeplyNestedBodiesAreRefused sends bodies under the size limit whose values nest a
// million levels deep: before the fix the protobuf one overflowed the decoder's stack, a
// fatal error that killed the server. Both are refused with 400, and the server goes on
// serving; a body exactly at the limit is decoded (its span then refused for its depth).
func TestDeeplyNestedBodiesAreRefused(t *testing.T) {
	srv, _ := newServer(t)
	for _, tc := range []struct {
		contentType string
		body        []byte
	}{
		{protobufType, deepProtobuf(1_500_000)},
		{jsonType, deepJSON(550_000)},
	} {
		if len(tc.body) > otlp.DefaultMaxBodyBytes {
			t.Fatalf("%s: %d bytes, over the body limit", tc.contentType, len(tc.body))
		}
		resp, out := post(t, srv, tc.body, map[string]string{"Content-Type": tc.contentType})
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(out, []byte("nested too deeply")) {
			t.Errorf("%s, %d bytes: %s %q", tc.contentType, len(tc.body), resp.Status, out)
		}
	}
	for _, tc := range []struct {
		contentType string
		body        []byte
	}{
		{protobufType, deepProtobuf(otlp.MaxWireNesting - 1)}, // the attribute's value is one more level
		{jsonType, deepJSON(otlp.MaxWireNesting - 1)},
	} {
		resp, out := post(t, srv, tc.body, map[string]string{"Content-Type": tc.contentType})
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("deeper than 512 levels")) {
			t.Errorf("%s at the limit: %s %q, want the span refused for its depth", tc.contentType, resp.Status, out)
		}
	}
	if got := exportProtobuf(t, srv, genAISpan("after")).PartialSuccess().RejectedSpans(); got != 0 {
		t.Errorf("a valid span after the deep bodies: %d rejected", got)
	}
}
