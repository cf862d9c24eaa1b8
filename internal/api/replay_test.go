package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/chain"
)

func TestReplayVerify(t *testing.T) {
	f := newFixture(t, 12, func(o *Options) { o.APIKey = testAPIKey })
	auth := []string{"Authorization", "Bearer " + testAPIKey}
	request := func(seq int64, output string) string {
		b, err := json.Marshal(map[string]any{"seq": seq, "output": output})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// testBody: seq 2 records a seed, seq 3 none, seq 5 no replay context.
	tests := map[string]struct {
		seq           int64
		output        string
		reason        string
		deterministic bool
	}{
		"the recorded output":                 {seq: 2, output: testOutput(2), reason: chain.ReasonMatch, deterministic: true},
		"another output of a seeded call":     {seq: 2, output: "something else", reason: chain.ReasonOutputMismatch, deterministic: true},
		"another output of an unseeded call":  {seq: 3, output: "something else", reason: chain.ReasonNondeterministicMismatch},
		"the output of an unseeded call":      {seq: 3, output: testOutput(3), reason: chain.ReasonMatch},
		"an entry without a replay context":   {seq: 5, output: testOutput(5), reason: chain.ReasonNoReplayContext},
		"an empty output is an output":        {seq: 4, output: "", reason: chain.ReasonOutputMismatch, deterministic: true},
		"a trailing newline changes the hash": {seq: 4, output: testOutput(4) + "\n", reason: chain.ReasonOutputMismatch, deterministic: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/api/replay/verify", "/replay/verify"} {
				resp, body := f.postJSON(path, request(tc.seq, tc.output), auth...)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
				}
				var got chain.ReplayResult
				decode(t, body, &got)
				e, err := f.store.Entry(t.Context(), tc.seq)
				if err != nil {
					t.Fatal(err)
				}
				if want := chain.VerifyReplay(e, tc.output); got != want {
					t.Fatalf("%s: got %+v, want VerifyReplay's %+v", path, got, want)
				}
				if got.Reason != tc.reason || got.Match != (tc.reason == chain.ReasonMatch) || got.Deterministic != tc.deterministic || got.Seq != tc.seq {
					t.Fatalf("%s: got %+v, want reason %s", path, got, tc.reason)
				}
			}
		})
	}
	// A body that is not a span is malformed_entry, still a 200 verdict.
	f.tamper(`UPDATE chain SET canonical_body = ? WHERE seq = 7`, []byte(`{"attributes":{"cairn.replay.output_sha256":"XYZ"}}`))
	resp, body := f.postJSON("/api/replay/verify", request(7, "x"), auth...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"reason":"`+chain.ReasonMalformedEntry+`"`) {
		t.Errorf("tampered entry: %d %s", resp.StatusCode, body)
	}

	for _, path := range []string{"/api/replay/verify", "/replay/verify"} {
		resp, body := f.postJSON(path, request(13, "x"), auth...)
		if e := wantError(t, resp, body, http.StatusNotFound, codeNotFound); !strings.Contains(e.Error, "13") {
			t.Errorf("%s: the 404 does not name seq 13: %q", path, e.Error)
		}
		resp, body = f.postJSON(path, request(2, testOutput(2)))
		wantError(t, resp, body, http.StatusUnauthorized, codeUnauthorized)
	}
	bad := map[string]struct {
		body string
		code string
	}{
		"not JSON":          {body: `{"seq":2,"output":`, code: codeBadJSON},
		"empty body":        {body: ``, code: codeBadJSON},
		"unknown field":     {body: `{"seq":2,"output":"x","model":"gpt-4o"}`, code: codeBadJSON},
		"seq as a string":   {body: `{"seq":"2","output":"x"}`, code: codeBadJSON},
		"output not string": {body: `{"seq":2,"output":42}`, code: codeBadJSON},
		"no output":         {body: `{"seq":2}`, code: codeBadParameter},
		"null output":       {body: `{"seq":2,"output":null}`, code: codeBadParameter},
		"no seq":            {body: `{"output":"x"}`, code: codeBadParameter},
		"seq 0":             {body: `{"seq":0,"output":"x"}`, code: codeBadParameter},
		"negative seq":      {body: `{"seq":-4,"output":"x"}`, code: codeBadParameter},
		"fractional seq":    {body: `{"seq":2.5,"output":"x"}`, code: codeBadJSON},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			resp, body := f.postJSON("/api/replay/verify", tc.body, auth...)
			wantError(t, resp, body, http.StatusBadRequest, tc.code)
		})
	}
	huge := fmt.Sprintf(`{"seq":2,"output":%q}`, strings.Repeat("y", maxJSONBodyBytes))
	resp, body = f.postJSON("/api/replay/verify", huge, auth...)
	wantError(t, resp, body, http.StatusRequestEntityTooLarge, codeBodyTooLarge)
}
