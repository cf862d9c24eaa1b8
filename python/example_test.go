package python_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/chain"
)

// startChainService runs the chain service as cairn serve builds it (the store, the OTLP
// receiver at POST /v1/traces and the API, behind apiKey) on a fresh chain, and returns
// its base URL and its store.
func startChainService(t *testing.T, apiKey string) (string, *store.Store) {
	t.Helper()
	secret := bytes.Repeat([]byte{0x5a}, 32)
	db := filepath.Join(t.TempDir(), "chain.db")
	s, err := store.Open(db, secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	log := slog.New(slog.DiscardHandler)
	traces, err := otlp.NewHandler(s, otlp.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Options{Store: s, DBPath: db, Secret: secret, Logger: log, Traces: traces, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, s
}

// TestExampleSealsOverOTLPAndVerifiesReplays runs examples/replay_over_otlp.py against a
// chain service: its span must be sealed with the replay attributes Go's
// RecordReplayContext gives for the same call, and the server must report the same
// output as a match and another output as a deterministic mismatch, as the local
// verify_replay does.
func TestExampleSealsOverOTLPAndVerifiesReplays(t *testing.T) {
	const key = "example-api-key-0123456789"
	url, s := startChainService(t, key)
	out := runPython(t, nil, "examples/replay_over_otlp.py", "--url", url, "--api-key", key, "--json")
	var report struct {
		Seq       int64          `json:"seq"`
		SpanID    string         `json:"span_id"`
		Replay    map[string]any `json:"replay_attributes"`
		Same      map[string]any `json:"same"`
		Other     map[string]any `json:"other"`
		LocalSame map[string]any `json:"local_same"`
		LocalOthr map[string]any `json:"local_other"`
		Agree     bool           `json:"agree"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("the example's report: %v\n%s", err, out)
	}

	// The span was sealed, with the attributes the Go helper records for the same call.
	e, err := s.Entry(t.Context(), report.Seq)
	if err != nil {
		t.Fatalf("entry %d: %v", report.Seq, err)
	}
	if e.SpanID != report.SpanID {
		t.Fatalf("entry %d holds span %s, want %s", e.Seq, e.SpanID, report.SpanID)
	}
	var body struct {
		Attributes map[string]any `json:"attributes"`
	}
	if err := json.Unmarshal(e.CanonicalBody, &body); err != nil {
		t.Fatal(err)
	}
	seed := int64(42)
	want := chain.RecordReplayContext("What is the capital of France?", "The capital of France is Paris.", "gpt-4o",
		&seed, 0, 1, chain.WithModelVersion("gpt-4o-2024-08-06"))
	sealed := map[string]any{}
	for k := range want {
		if v, ok := body.Attributes[k]; ok {
			sealed[k] = v
		}
	}
	if got, want := canonicalAttrs(t, sealed), canonicalAttrs(t, want); !bytes.Equal(got, want) {
		t.Errorf("sealed replay attributes\n%s\nwant\n%s", got, want)
	}

	// The server's verdicts, and the local ones, are Go's on the sealed entry.
	for name, c := range map[string]struct {
		server, local map[string]any
		output        string
		code          string
	}{
		"same output":    {report.Same, report.LocalSame, "The capital of France is Paris.", chain.ReasonMatch},
		"another output": {report.Other, report.LocalOthr, "The capital of France is Lyon.", chain.ReasonOutputMismatch},
	} {
		goJSON, err := json.Marshal(chain.VerifyReplay(e, c.output))
		if err != nil {
			t.Fatal(err)
		}
		var wantMap map[string]any
		if err := json.Unmarshal(goJSON, &wantMap); err != nil {
			t.Fatal(err)
		}
		if c.server["reason_code"] != c.code || c.server["match"] != (c.code == chain.ReasonMatch) {
			t.Errorf("%s: the server answered %v, want %s", name, c.server, c.code)
		}
		for _, got := range []map[string]any{c.server, c.local} {
			if !jsonEqual(got, wantMap) {
				t.Errorf("%s: %v, want %s", name, got, goJSON)
			}
		}
	}
	if !report.Agree {
		t.Errorf("the example reports that the local check disagrees with the server:\n%s", out)
	}

	// Its report for people says the same (a second span, sealed after the first).
	text := string(runPython(t, nil, "examples/replay_over_otlp.py", "--url", url, "--api-key", key))
	for _, want := range []string{"as seq 2\n", "same output:   match=True (match)",
		"another output:    match=False (output_mismatch): output hash mismatch", "local verify_replay agrees with the server"} {
		if !strings.Contains(text, want) {
			t.Errorf("the example's report lacks %q:\n%s", want, text)
		}
	}
}

// jsonEqual reports whether a and b encode to the same JSON.
func jsonEqual(a, b map[string]any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
