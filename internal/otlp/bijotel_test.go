package otlp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// bijotelJSON is an OTLP JSON request from an app instrumented for the original product
// (BIJOTEL): an MCP tool call carrying only bijotel.mcp.* attributes, a model call with
// gen_ai.* and the original's bijotel.replay.* attributes, and a span with replay
// attributes alone, which the original does not seal either.
const bijotelJSON = `{"resourceSpans": [{"scopeSpans": [{"spans": [
  {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "mcp tools/call search",
   "kind": 3, "startTimeUnixNano": "1795262401000000000", "endTimeUnixNano": "1795262401200000000",
   "attributes": [
     {"key": "bijotel.mcp.method", "value": {"stringValue": "tools/call"}},
     {"key": "bijotel.mcp.tool.name", "value": {"stringValue": "search"}}]},
  {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203332", "name": "chat gpt-4o",
   "kind": 3, "startTimeUnixNano": "1795262402000000000", "endTimeUnixNano": "1795262402900000000",
   "attributes": [
     {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
     {"key": "bijotel.replay.output_hash", "value": {"stringValue": "a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319"}},
     {"key": "bijotel.replay.deterministic", "value": {"boolValue": true}},
     {"key": "bijotel.replay.seed", "value": {"intValue": "42"}},
     {"key": "bijotel.replay.temperature", "value": {"doubleValue": 0.0}},
     {"key": "bijotel.replay.model_version", "value": {"stringValue": "gpt-4o-2024-08-06"}}]},
  {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203333", "name": "replay metadata alone",
   "startTimeUnixNano": "1795262403000000000", "endTimeUnixNano": "1795262403000000001",
   "attributes": [{"key": "bijotel.replay.deterministic", "value": {"boolValue": false}}]}
]}]}]}`

// TestBijotelInstrumentedSpans: a span carrying only the original's bijotel.mcp.*
// attributes is sealed, as the original seals it since 2.13.3; the original's attribute
// names are sealed as received, never rewritten to Cairn's; a span with none of gen_ai.*
// and bijotel.mcp.* is not sealed.
func TestBijotelInstrumentedSpans(t *testing.T) {
	srv, sealer := newServer(t)
	resp, out := post(t, srv, []byte(bijotelJSON), map[string]string{"Content-Type": jsonType})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", resp.Status, out)
	}
	var answer struct {
		PartialSuccess struct {
			RejectedSpans string `json:"rejectedSpans"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	if answer.PartialSuccess.RejectedSpans != "1" ||
		!strings.HasPrefix(answer.PartialSuccess.ErrorMessage, "1 spans carry no gen_ai.* or bijotel.mcp.* attribute") {
		t.Fatalf("response %s, want the span with replay attributes alone rejected", out)
	}
	calls, entries := sealer.sealed()
	if len(calls) != 1 || len(entries) != 2 {
		t.Fatalf("Seal calls %v, %d entries: want one call sealing the MCP span and the model call", calls, len(entries))
	}
	const wantMCP = `{"attributes":{"bijotel.mcp.method":"tools/call","bijotel.mcp.tool.name":"search"},"end_time_ns":"1795262401200000000","kind":"client","name":"mcp tools/call search","span_id":"b7ad6b7169203331","start_time_ns":"1795262401000000000","status_code":"UNSET","status_description":"","trace_id":"0af7651916cd43dd8448eb211c80319c"}`
	if string(entries[0].CanonicalBody) != wantMCP {
		t.Errorf("MCP span body\n got %s\nwant %s", entries[0].CanonicalBody, wantMCP)
	}
	const wantAttrs = `"attributes":{"bijotel.replay.deterministic":true,"bijotel.replay.model_version":"gpt-4o-2024-08-06",` +
		`"bijotel.replay.output_hash":"a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319","bijotel.replay.seed":42,` +
		`"bijotel.replay.temperature":0,"gen_ai.request.model":"gpt-4o"}`
	if body := string(entries[1].CanonicalBody); !strings.Contains(body, wantAttrs) || strings.Contains(body, "cairn.replay") {
		t.Errorf("model call body %s, want the original's attribute names as sent:\n%s", body, wantAttrs)
	}
	if n := verifyFull(t, sealer.store); n != 2 {
		t.Fatalf("full verify checked %d entries, want 2", n)
	}
}
