package otlp_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// handWrittenJSON is an OTLP JSON ExportTraceServiceRequest as any SDK may send it: the
// first span is the chain-row example of docs/PROTOCOL.md §2; the second has every value
// type, upper-case hex ids, an integer given as a JSON number, a key repeated inside a
// key-value list, events and a parent; the third has no gen_ai attribute.
const handWrittenJSON = `{
  "resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "billing"}}]},
    "scopeSpans": [{
      "scope": {"name": "openai-instrumentation", "version": "1.0.0"},
      "spans": [
        {
          "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
          "spanId": "00f067aa0ba902b1",
          "name": "chat gpt-4o",
          "kind": 3,
          "startTimeUnixNano": "1795262401000000000",
          "endTimeUnixNano": "1795262401850000000",
          "attributes": [
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}}
          ],
          "status": {"code": 1}
        },
        {
          "traceId": "4BF92F3577B34DA6A3CE929D0E0E4736",
          "spanId": "A1B2C3D4E5F60718",
          "parentSpanId": "00f067aa0ba902b1",
          "name": "embeddings",
          "kind": 1,
          "startTimeUnixNano": "1795262402000000000",
          "endTimeUnixNano": "1795262402000000500",
          "attributes": [
            {"key": "gen_ai.request.temperature", "value": {"doubleValue": 0.7}},
            {"key": "gen_ai.stream", "value": {"boolValue": true}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": 7}},
            {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
            {"key": "gen_ai.request.metadata", "value": {"kvlistValue": {"values": [
              {"key": "user", "value": {"stringValue": "u1"}},
              {"key": "user", "value": {"stringValue": "u2"}}
            ]}}},
            {"key": "raw", "value": {"bytesValue": "AAEC"}},
            {"key": "none", "value": {"bytesValue": ""}},
            {"key": "nothing", "value": {}},
            {"key": "big", "value": {"intValue": "9007199254740993"}}
          ],
          "events": [{"timeUnixNano": "1795262402000000100", "name": "token"}],
          "status": {"code": 2, "message": "boom"}
        },
        {
          "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
          "spanId": "1111111111111111",
          "name": "GET /health",
          "kind": 2,
          "startTimeUnixNano": "1795262403000000000",
          "endTimeUnixNano": "1795262403000001000",
          "attributes": [{"key": "http.route", "value": {"stringValue": "/health"}}]
        }
      ]
    }]
  }]
}`

// TestHandWrittenJSON seals a hand-written OTLP JSON request into a chain with the secret
// of docs/PROTOCOL.md's chain-row example, and checks the example's body, hashes and
// HMAC, the second span's body byte for byte, and the JSON partial success response.
func TestHandWrittenJSON(t *testing.T) {
	secret, err := hex.DecodeString("5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c")
	if err != nil {
		t.Fatal(err)
	}
	srv, sealer := serve(t, &recordingSealer{store: openStore(t, secret)})
	resp, out := post(t, srv, []byte(handWrittenJSON), map[string]string{"Content-Type": "application/json; charset=utf-8"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %q: %s", resp.Status, resp.Header.Get("Content-Type"), out)
	}

	// The response is OTLP JSON: lowerCamelCase names, the int64 count as a string.
	var raw struct {
		PartialSuccess struct {
			RejectedSpans string `json:"rejectedSpans"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	if raw.PartialSuccess.RejectedSpans != "1" || !strings.Contains(raw.PartialSuccess.ErrorMessage, "1 spans carry no gen_ai.* or bijotel.mcp.* attribute") {
		t.Fatalf("response %s, want one span rejected for having no gen_ai attribute", out)
	}
	decoded := ptraceotlp.NewExportResponse()
	if err := decoded.UnmarshalJSON(out); err != nil || decoded.PartialSuccess().RejectedSpans() != 1 {
		t.Fatalf("response %s does not decode as an ExportTraceServiceResponse rejecting 1 span (%v)", out, err)
	}

	calls, entries := sealer.sealed()
	if len(calls) != 1 || calls[0] != 2 || len(entries) != 2 {
		t.Fatalf("Seal calls %v, %d entries: want one call sealing the 2 gen_ai spans", calls, len(entries))
	}
	first := entries[0]
	const wantFirst = `{"attributes":{"gen_ai.request.model":"gpt-4o","gen_ai.usage.input_tokens":12},"end_time_ns":"1795262401850000000","kind":"client","name":"chat gpt-4o","span_id":"00f067aa0ba902b1","start_time_ns":"1795262401000000000","status_code":"OK","status_description":"","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`
	if string(first.CanonicalBody) != wantFirst ||
		first.CanonicalHash != "dbb6a34634b9cd6685b8747742e45ff312cf6f272793890d46a901d248ab0736" ||
		first.HMACHash != "1c4aa1ede724a746d6f5e40bbb5e340169ec045a303d7c06f921ef0ad4904036" {
		t.Errorf("entry 1 is not PROTOCOL.md's example:\nbody %s\nhash %s\nhmac %s", first.CanonicalBody, first.CanonicalHash, first.HMACHash)
	}
	const wantSecond = `{"attributes":{"big":"9007199254740993","gen_ai.request.metadata":{"user":"u2"},"gen_ai.request.temperature":0.7,"gen_ai.response.finish_reasons":["stop"],"gen_ai.stream":true,"gen_ai.usage.output_tokens":7,"none":"","nothing":null,"raw":"AAEC"},"end_time_ns":"1795262402000000500","kind":"internal","name":"embeddings","span_id":"a1b2c3d4e5f60718","start_time_ns":"1795262402000000000","status_code":"ERROR","status_description":"boom","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`
	if !bytes.Equal(entries[1].CanonicalBody, []byte(wantSecond)) {
		t.Errorf("entry 2 body\n got %s\nwant %s", entries[1].CanonicalBody, wantSecond)
	}
	if n := verifyFull(t, sealer.store); n != 2 {
		t.Fatalf("full verify checked %d entries, want 2", n)
	}
}

// TestJSONUnknownFieldsAreIgnored: OTLP/JSON receivers must ignore fields they do not
// know (newer senders add some), at every level.
func TestJSONUnknownFieldsAreIgnored(t *testing.T) {
	srv, sealer := newServer(t)
	body := `{"futureField": {"a": [1, 2]}, "resourceSpans": [{"unknown": true, "scopeSpans": [{"spans": [{
		"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b1", "name": "chat",
		"startTimeUnixNano": "1", "endTimeUnixNano": "2", "someNewSpanField": "x",
		"attributes": [{"key": "gen_ai.system", "value": {"stringValue": "openai", "newValueKind": 1}}]}]}]}]}`
	resp, out := post(t, srv, []byte(body), map[string]string{"Content-Type": jsonType})
	if resp.StatusCode != http.StatusOK || string(out) != "{}" {
		t.Fatalf("%s: %s", resp.Status, out)
	}
	_, entries := sealer.sealed()
	if len(entries) != 1 || !strings.Contains(string(entries[0].CanonicalBody), `"attributes":{"gen_ai.system":"openai"}`) {
		t.Fatalf("sealed %d entries: %v", len(entries), entries)
	}
}
