package api

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/otlp"
)

// bijotelReplayTraces is an OTLP JSON request from an app instrumented for the original
// product (BIJOTEL): its replay recorder's bijotel.replay.* attributes on three model
// calls. Span 1 was made with a seed, span 2 without; span 3 records two different output
// hashes, Paris under Cairn's name and Lyon under the original's.
const bijotelReplayTraces = `{"resourceSpans": [{"scopeSpans": [{"spans": [
 {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b171", "name": "chat gpt-4o", "kind": 3,
  "startTimeUnixNano": "1795262401000000000", "endTimeUnixNano": "1795262401900000000",
  "attributes": [
   {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
   {"key": "bijotel.replay.prompt_hash", "value": {"stringValue": "` + emptySHA256 + `"}},
   {"key": "bijotel.replay.output_hash", "value": {"stringValue": "` + parisSHA256 + `"}},
   {"key": "bijotel.replay.temperature", "value": {"doubleValue": 0}},
   {"key": "bijotel.replay.top_p", "value": {"doubleValue": 1}},
   {"key": "bijotel.replay.model_version", "value": {"stringValue": "gpt-4o-2024-08-06"}},
   {"key": "bijotel.replay.deterministic", "value": {"boolValue": true}},
   {"key": "bijotel.replay.seed", "value": {"intValue": "42"}}]},
 {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b172", "name": "chat claude-sonnet-4", "kind": 3,
  "startTimeUnixNano": "1795262402000000000", "endTimeUnixNano": "1795262402900000000",
  "attributes": [
   {"key": "gen_ai.request.model", "value": {"stringValue": "claude-sonnet-4"}},
   {"key": "bijotel.replay.output_hash", "value": {"stringValue": "` + pondSHA256 + `"}},
   {"key": "bijotel.replay.temperature", "value": {"doubleValue": 0.7}},
   {"key": "bijotel.replay.model_version", "value": {"stringValue": "claude-sonnet-4"}},
   {"key": "bijotel.replay.deterministic", "value": {"boolValue": false}}]},
 {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b173", "name": "chat gpt-4o", "kind": 3,
  "startTimeUnixNano": "1795262403000000000", "endTimeUnixNano": "1795262403900000000",
  "attributes": [
   {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
   {"key": "cairn.replay.output_hash", "value": {"stringValue": "` + parisSHA256 + `"}},
   {"key": "bijotel.replay.output_hash", "value": {"stringValue": "` + lyonSHA256 + `"}},
   {"key": "bijotel.replay.model_version", "value": {"stringValue": "gpt-4o-2024-08-06"}},
   {"key": "bijotel.replay.deterministic", "value": {"boolValue": true}}]}
]}]}]}`

// reasonConflict is the reason of an entry recording its output hash under two names
// with different values.
const reasonConflict = "cairn.replay.output_hash and bijotel.replay.output_hash hold different values: " +
	"the entry records one replay attribute twice, so neither is used"

// TestReplayVerifyOfSpansInstrumentedForTheOriginal sends model calls instrumented the
// original product's way through POST /v1/traces in OTLP JSON, and replay-checks them
// through POST /api/replay/verify: the bijotel.replay.* attributes are read as Cairn's,
// and an entry recording two output hashes matches neither.
func TestReplayVerifyOfSpansInstrumentedForTheOriginal(t *testing.T) {
	f := newFixture(t, 0, func(o *Options) {
		o.APIKey = testAPIKey
		var err error
		if o.Traces, err = otlp.NewHandler(o.Store, otlp.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
			t.Fatal(err)
		}
	})
	auth := []string{"Authorization", "Bearer " + testAPIKey}
	resp, body := f.postJSON("/v1/traces", bijotelReplayTraces, auth...)
	if resp.StatusCode != http.StatusOK || string(body) != "{}" {
		t.Fatalf("POST /v1/traces: %d %s, want all three spans sealed", resp.StatusCode, body)
	}
	// The bodies keep the names they were sent with.
	e, err := f.store.Entry(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(e.CanonicalBody); !strings.Contains(b, `"bijotel.replay.output_hash":"`+parisSHA256+`"`) || strings.Contains(b, "cairn.replay") {
		t.Fatalf("entry 1 body %s, want the original's names as sent", b)
	}

	tests := map[string]struct {
		body string
		want map[string]any // the whole answer
	}{
		"a deterministic match": {`{"seq": 1, "replayed_output": "The capital of France is Paris."}`, map[string]any{
			"match": true, "original_hash": parisSHA256, "replay_hash": parisSHA256, "deterministic": true,
			"model_version": "gpt-4o-2024-08-06", "reason": nil,
			"seq": 1.0, "reason_code": "match", "model": "gpt-4o"}},
		"a deterministic mismatch": {`{"seq": 1, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": parisSHA256, "replay_hash": lyonSHA256, "deterministic": true,
			"model_version": "gpt-4o-2024-08-06", "reason": reasonReExecute("gpt-4o-2024-08-06"),
			"seq": 1.0, "reason_code": "output_mismatch", "model": "gpt-4o"}},
		"a match without a seed": {`{"seq": 2, "replayed_output": "An old silent pond"}`, map[string]any{
			"match": true, "original_hash": pondSHA256, "replay_hash": pondSHA256, "deterministic": false,
			"model_version": "claude-sonnet-4", "reason": nil,
			"seq": 2.0, "reason_code": "match", "model": "claude-sonnet-4"}},
		"a mismatch without a seed": {`{"seq": 2, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": pondSHA256, "replay_hash": lyonSHA256, "deterministic": false,
			"model_version": "claude-sonnet-4", "reason": reasonDriftExpected,
			"seq": 2.0, "reason_code": "nondeterministic_mismatch", "model": "claude-sonnet-4"}},
		// Neither recorded hash is chosen: the output under Cairn's name does not match,
		// nor the one under the original's.
		"two output hashes, Cairn's replayed": {`{"seq": 3, "replayed_output": "The capital of France is Paris."}`, map[string]any{
			"match": false, "original_hash": nil, "replay_hash": parisSHA256, "deterministic": false,
			"model_version": nil, "reason": reasonConflict,
			"seq": 3.0, "reason_code": "conflicting_replay_context", "model": "gpt-4o"}},
		"two output hashes, the original's replayed": {`{"seq": 3, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": nil, "replay_hash": lyonSHA256, "deterministic": false,
			"model_version": nil, "reason": reasonConflict,
			"seq": 3.0, "reason_code": "conflicting_replay_context", "model": "gpt-4o"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f.wantReplayAnswer(t, "/api/replay/verify", tc.body, tc.want)
		})
	}
}
