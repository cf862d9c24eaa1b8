package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Hex SHA-256 of the outputs the replay chain records, and of one it does not.
const (
	parisSHA256 = "a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319" // The capital of France is Paris.
	pondSHA256  = "0e9f4320dbb19c71de50ff67e4b64e77bfc6453982fc773941694ddf36327a1f" // An old silent pond
	lyonSHA256  = "997fa25f0465c2fb900ac0c932e3f1d82f28135683848b544c91c3fc66c68cb7" // The capital of France is Lyon.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// replayChainAttrs are the attributes of the replay chain's entries, by seq: 1 without a
// replay context; 2 and 5 sealed by earlier Cairn releases (cairn.replay.output_sha256,
// cairn.replay.model), 2 with a seed and 5 without; 3 and 4 as docs/API.md's fixture seals
// them, with the documented names, 3 with a seed and 4 without.
var replayChainAttrs = []map[string]any{
	{"gen_ai.request.model": "gpt-4o"},
	{"gen_ai.request.model": "gpt-4o", "cairn.replay.prompt_sha256": emptySHA256, "cairn.replay.output_sha256": parisSHA256,
		"cairn.replay.model": "gpt-4o", "cairn.replay.temperature": 0.0, "cairn.replay.top_p": 1.0,
		"cairn.replay.seed": 42, "cairn.replay.deterministic": true},
	{"gen_ai.request.model": "gpt-4o", "cairn.replay.prompt_hash": emptySHA256, "cairn.replay.output_hash": parisSHA256,
		"cairn.replay.seed": 42, "cairn.replay.temperature": 0.0, "cairn.replay.top_p": 1.0,
		"cairn.replay.model_version": "gpt-4o-2024-08-06", "cairn.replay.deterministic": true},
	{"gen_ai.request.model": "claude-sonnet-4", "cairn.replay.prompt_hash": emptySHA256, "cairn.replay.output_hash": pondSHA256,
		"cairn.replay.temperature": 0.7, "cairn.replay.top_p": 1.0,
		"cairn.replay.model_version": "claude-sonnet-4", "cairn.replay.deterministic": false},
	{"cairn.replay.output_sha256": pondSHA256, "cairn.replay.model": "claude-sonnet-4",
		"cairn.replay.temperature": 0.7, "cairn.replay.top_p": 1.0, "cairn.replay.deterministic": false},
}

// newReplayFixture is a server over the replay chain, behind the test API key.
func newReplayFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, 0, func(o *Options) { o.APIKey = testAPIKey })
	bodies := make([]protocol.SpanBody, len(replayChainAttrs))
	for i, attrs := range replayChainAttrs {
		start := testTime.UnixNano() + int64(i)*int64(time.Minute)
		bodies[i] = protocol.SpanBody{Name: "chat", Kind: "client", Attributes: attrs, StatusCode: "OK",
			StartTimeNS: start, EndTimeNS: start + 500_000_000,
			TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1)}
	}
	if _, err := f.store.Seal(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	return f
}

// The advisory reasons, as clients read them.
const (
	reasonDriftExpected = "output hash mismatch — original call did not record a seed (deterministic=false); replay drift is expected"
	reasonNoHash        = "chain entry has no cairn.replay.output_hash or bijotel.replay.output_hash (replay metadata not attached)"
)

// reasonReExecute is the advice on a deterministic mismatch of model version mv.
func reasonReExecute(mv string) string {
	return "output hash mismatch — re-execute against the SAME model version that produced the original ('" + mv +
		"') and verify the prompt hash before treating this as tampering"
}

func TestReplayVerify(t *testing.T) {
	f := newReplayFixture(t)
	tests := map[string]struct {
		body string
		want map[string]any // the whole answer
	}{
		"a match": {`{"seq": 3, "replayed_output": "The capital of France is Paris."}`, map[string]any{
			"match": true, "original_hash": parisSHA256, "replay_hash": parisSHA256, "deterministic": true,
			"model_version": "gpt-4o-2024-08-06", "reason": nil,
			"seq": 3.0, "reason_code": "match", "model": "gpt-4o"}},
		"a deterministic mismatch": {`{"seq": 3, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": parisSHA256, "replay_hash": lyonSHA256, "deterministic": true,
			"model_version": "gpt-4o-2024-08-06", "reason": reasonReExecute("gpt-4o-2024-08-06"),
			"seq": 3.0, "reason_code": "output_mismatch", "model": "gpt-4o"}},
		"a mismatch without a seed": {`{"seq": 4, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": pondSHA256, "replay_hash": lyonSHA256, "deterministic": false,
			"model_version": "claude-sonnet-4", "reason": reasonDriftExpected,
			"seq": 4.0, "reason_code": "nondeterministic_mismatch", "model": "claude-sonnet-4"}},
		"a match without a seed": {`{"seq": 4, "replayed_output": "An old silent pond"}`, map[string]any{
			"match": true, "original_hash": pondSHA256, "replay_hash": pondSHA256, "deterministic": false,
			"model_version": "claude-sonnet-4", "reason": nil,
			"seq": 4.0, "reason_code": "match", "model": "claude-sonnet-4"}},
		"no replay context": {`{"seq": 1, "replayed_output": ""}`, map[string]any{
			"match": false, "original_hash": nil, "replay_hash": emptySHA256, "deterministic": false,
			"model_version": nil, "reason": reasonNoHash,
			"seq": 1.0, "reason_code": "no_replay_context", "model": "gpt-4o"}},
		"earlier attribute names, a match": {`{"seq": 2, "replayed_output": "The capital of France is Paris."}`, map[string]any{
			"match": true, "original_hash": parisSHA256, "replay_hash": parisSHA256, "deterministic": true,
			"model_version": "gpt-4o", "reason": nil,
			"seq": 2.0, "reason_code": "match", "model": "gpt-4o"}},
		"earlier attribute names, a deterministic mismatch": {`{"seq": 2, "replayed_output": "The capital of France is Lyon."}`, map[string]any{
			"match": false, "original_hash": parisSHA256, "replay_hash": lyonSHA256, "deterministic": true,
			"model_version": "gpt-4o", "reason": reasonReExecute("gpt-4o"),
			"seq": 2.0, "reason_code": "output_mismatch", "model": "gpt-4o"}},
		"earlier attribute names, no seed": {`{"seq": 5, "replayed_output": ""}`, map[string]any{
			"match": false, "original_hash": pondSHA256, "replay_hash": emptySHA256, "deterministic": false,
			"model_version": "claude-sonnet-4", "reason": reasonDriftExpected,
			"seq": 5.0, "reason_code": "nondeterministic_mismatch", "model": nil}},
		"the earlier request member output": {`{"seq": 3, "output": "The capital of France is Paris."}`, map[string]any{
			"match": true, "original_hash": parisSHA256, "replay_hash": parisSHA256, "deterministic": true,
			"model_version": "gpt-4o-2024-08-06", "reason": nil,
			"seq": 3.0, "reason_code": "match", "model": "gpt-4o"}},
		"both request members, equal": {`{"seq": 4, "replayed_output": "x", "output": "x"}`, map[string]any{
			"match": false, "original_hash": pondSHA256, "replay_hash": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
			"deterministic": false, "model_version": "claude-sonnet-4", "reason": reasonDriftExpected,
			"seq": 4.0, "reason_code": "nondeterministic_mismatch", "model": "claude-sonnet-4"}},
		"a trailing newline changes the hash": {`{"seq": 3, "replayed_output": "The capital of France is Paris.\n"}`, map[string]any{
			"match": false, "original_hash": parisSHA256, "replay_hash": "c9ba5557ea09feef90011604657255a11621c036b482e8c85fe966f2cf20d0b7",
			"deterministic": true, "model_version": "gpt-4o-2024-08-06", "reason": reasonReExecute("gpt-4o-2024-08-06"),
			"seq": 3.0, "reason_code": "output_mismatch", "model": "gpt-4o"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/api/replay/verify", "/replay/verify"} {
				f.wantReplayAnswer(t, path, tc.body, tc.want)
			}
		})
	}
}

// wantReplayAnswer posts body to path with the test API key and fails unless the answer
// is a 200 whose JSON is want.
func (f *fixture) wantReplayAnswer(t *testing.T, path, body string, want map[string]any) {
	t.Helper()
	resp, out := f.postJSON(path, body, "Authorization", "Bearer "+testAPIKey)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v: %s", path, err, out)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ngot  %v\nwant %v", path, got, want)
	}
}

func TestReplayVerifyRefusals(t *testing.T) {
	f := newReplayFixture(t)
	auth := []string{"Authorization", "Bearer " + testAPIKey}
	// A body that is not a span is a malformed_entry verdict, still a 200 answer.
	f.tamper(`UPDATE chain SET canonical_body = ? WHERE seq = 5`, []byte(`{"attributes":{"cairn.replay.output_hash":"XYZ"}}`))
	resp, body := f.postJSON("/api/replay/verify", `{"seq":5,"replayed_output":"x"}`, auth...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"reason_code":"malformed_entry"`) ||
		!strings.Contains(string(body), `"reason":"cairn.replay.output_hash is not a string of 64 lowercase hex characters"`) {
		t.Errorf("tampered entry: %d %s", resp.StatusCode, body)
	}

	for _, path := range []string{"/api/replay/verify", "/replay/verify"} {
		resp, body := f.postJSON(path, `{"seq":13,"replayed_output":"x"}`, auth...)
		if e := wantError(t, resp, body, http.StatusNotFound, codeNotFound); !strings.Contains(e.Message, "13") {
			t.Errorf("%s: the 404 does not name seq 13: %q", path, e.Message)
		}
		resp, body = f.postJSON(path, `{"seq":3,"replayed_output":"x"}`)
		wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	}
	bad := map[string]struct {
		body string
		code string
	}{
		"not JSON":                  {body: `{"seq":2,"replayed_output":`, code: codeBadJSON},
		"empty body":                {body: ``, code: codeBadJSON},
		"unknown field":             {body: `{"seq":2,"replayed_output":"x","model":"gpt-4o"}`, code: codeBadJSON},
		"seq as a string":           {body: `{"seq":"2","replayed_output":"x"}`, code: codeBadJSON},
		"output not a string":       {body: `{"seq":2,"replayed_output":42}`, code: codeBadJSON},
		"earlier output not string": {body: `{"seq":2,"output":42}`, code: codeBadJSON},
		"no output":                 {body: `{"seq":2}`, code: codeBadParameter},
		"null output":               {body: `{"seq":2,"replayed_output":null}`, code: codeBadParameter},
		"both members, different":   {body: `{"seq":2,"replayed_output":"x","output":"y"}`, code: codeBadParameter},
		"no seq":                    {body: `{"replayed_output":"x"}`, code: codeBadParameter},
		"seq 0":                     {body: `{"seq":0,"replayed_output":"x"}`, code: codeBadParameter},
		"negative seq":              {body: `{"seq":-4,"replayed_output":"x"}`, code: codeBadParameter},
		"fractional seq":            {body: `{"seq":2.5,"replayed_output":"x"}`, code: codeBadJSON},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/replay/verify", tc.body, auth...)
			wantError(t, resp, body, http.StatusBadRequest, tc.code)
		})
	}
	huge := fmt.Sprintf(`{"seq":2,"replayed_output":%q}`, strings.Repeat("y", maxJSONBodyBytes))
	resp, body = f.postJSON("/api/replay/verify", huge, auth...)
	wantError(t, resp, body, http.StatusRequestEntityTooLarge, codeBodyTooLarge)
}
