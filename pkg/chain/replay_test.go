package chain_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

const (
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	abcSHA256   = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
)

func TestRecordReplayContext(t *testing.T) {
	seed, bigSeed := int64(42), int64(1)<<62
	// The documented attribute set, by its wire names.
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{
			"cairn.replay.prompt_hash": abcSHA256, "cairn.replay.output_hash": emptySHA256,
			"cairn.replay.temperature": 0.0, "cairn.replay.top_p": 1.0, "cairn.replay.model_version": "gpt-4o",
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		seed *int64
		opts []chain.ReplayOption
		want map[string]any
	}{
		{"seeded", &seed, nil, base(map[string]any{"cairn.replay.seed": int64(42), "cairn.replay.deterministic": true})},
		{"no seed", nil, nil, base(map[string]any{"cairn.replay.deterministic": false})},
		{"seed beyond 2^53", &bigSeed, nil,
			base(map[string]any{"cairn.replay.seed": "4611686018427387904", "cairn.replay.deterministic": true})},
		{"a model version", &seed, []chain.ReplayOption{chain.WithModelVersion("gpt-4o-2024-08-06")},
			base(map[string]any{"cairn.replay.seed": int64(42), "cairn.replay.deterministic": true,
				"cairn.replay.model_version": "gpt-4o-2024-08-06"})},
		{"an empty model version keeps the model", nil, []chain.ReplayOption{chain.WithModelVersion("")},
			base(map[string]any{"cairn.replay.deterministic": false})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chain.RecordReplayContext("abc", "", "gpt-4o", tc.seed, 0, 1, tc.opts...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
			body := validBody()
			body.Attributes = got
			if err := chain.ValidateSpanBody(body); err != nil {
				t.Fatalf("the replay context cannot be sealed: %v", err)
			}
		})
	}
}

// sealWithAttributes seals a body carrying attrs and returns its entry.
func sealWithAttributes(t *testing.T, attrs map[string]any) *protocol.Entry {
	t.Helper()
	body := validBody()
	body.Attributes = attrs
	e, err := chain.NewRecorder(&chainSealer{}).Record(context.Background(), body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// rawEntry is an entry with the given canonical body, as a reader might be handed one.
func rawEntry(body string) *protocol.Entry {
	return &protocol.Entry{Seq: 9, CanonicalBody: []byte(body)}
}

// The advisory texts VerifyReplay gives, pinned here as clients read them.
const (
	textNondeterministic = "output hash mismatch — original call did not record a seed (deterministic=false); replay drift is expected"
	textNoContext        = "chain entry has no cairn.replay.output_hash or bijotel.replay.output_hash (replay metadata not attached)"
)

// str is *p, or "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkVerdict fails unless r has reason code code, reason text reason ("" for none),
// recorded hash original, deterministic det, model version mv and model model ("" for
// none).
func checkVerdict(t *testing.T, r chain.ReplayResult, code, reason, original string, det bool, mv, model string) {
	t.Helper()
	if r.ReasonCode != code || r.Match != (code == chain.ReasonMatch) || r.Deterministic != det {
		t.Fatalf("VerifyReplay = %+v, want reason code %s, deterministic %v", r, code, det)
	}
	if (r.Reason == nil) != (reason == "") || str(r.Reason) != reason {
		t.Errorf("reason %q, want %q", str(r.Reason), reason)
	}
	if (r.OriginalHash == nil) != (original == "") || str(r.OriginalHash) != original {
		t.Errorf("original hash %q, want %q", str(r.OriginalHash), original)
	}
	if (r.ModelVersion == nil) != (mv == "") || str(r.ModelVersion) != mv {
		t.Errorf("model version %q, want %q", str(r.ModelVersion), mv)
	}
	if (r.Model == nil) != (model == "") || str(r.Model) != model {
		t.Errorf("model %q, want %q", str(r.Model), model)
	}
}

// textConflict is the reason of an entry holding one replay attribute under names a and b
// with different values.
func textConflict(a, b string) string {
	return a + " and " + b + " hold different values: the entry records one replay attribute twice, so neither is used"
}

// textDeterministic is the advice on a deterministic mismatch, naming model version mv.
func textDeterministic(mv string) string {
	return "output hash mismatch — re-execute against the SAME model version that produced the original (" + mv +
		") and verify the prompt hash before treating this as tampering"
}

func TestVerifyReplay(t *testing.T) {
	seed := int64(7)
	withModel := func(attrs map[string]any) map[string]any {
		attrs["gen_ai.request.model"] = "gpt-4o"
		return attrs
	}
	seeded := sealWithAttributes(t, withModel(chain.RecordReplayContext("p", "the answer", "gpt-4o", &seed, 0, 1,
		chain.WithModelVersion("gpt-4o-2024-08-06"))))
	unseeded := sealWithAttributes(t, withModel(chain.RecordReplayContext("p", "the answer", "gpt-4o", nil, 0.7, 0.9)))
	answerSHA := chain.RecordReplayContext("", "the answer", "", nil, 0, 0)[chain.AttrReplayOutputHash].(string)
	// Sealed by earlier releases, under the names they wrote.
	legacySeeded := rawEntry(`{"attributes":{"gen_ai.request.model":"gpt-4o","cairn.replay.prompt_sha256":"` + emptySHA256 +
		`","cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.model":"gpt-4o","cairn.replay.seed":1,"cairn.replay.deterministic":true}}`)
	legacyUnseeded := rawEntry(`{"attributes":{"cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.model":"m1","cairn.replay.deterministic":false}}`)
	both := rawEntry(`{"attributes":{"cairn.replay.output_hash":"` + abcSHA256 + `","cairn.replay.output_sha256":"` + emptySHA256 +
		`","cairn.replay.model_version":"new","cairn.replay.model":"old","cairn.replay.seed":1}}`)
	seedOnly := rawEntry(`{"attributes":{"cairn.replay.output_hash":"` + abcSHA256 + `","cairn.replay.seed":3}}`)

	const malformedHash = "cairn.replay.output_hash is not a string of 64 lowercase hex characters"
	tests := []struct {
		name     string
		entry    *protocol.Entry
		replayed string
		code     string
		reason   string // "" on a match
		original string // "" when there is no valid recorded hash
		det      bool
		mv       string // "" when none is recorded
		model    string // "" when the span names none
	}{
		{"deterministic match", seeded, "the answer", chain.ReasonMatch, "", answerSHA, true, "gpt-4o-2024-08-06", "gpt-4o"},
		{"deterministic mismatch", seeded, "another answer", chain.ReasonOutputMismatch,
			textDeterministic("'gpt-4o-2024-08-06'"), answerSHA, true, "gpt-4o-2024-08-06", "gpt-4o"},
		{"unseeded match", unseeded, "the answer", chain.ReasonMatch, "", answerSHA, false, "gpt-4o", "gpt-4o"},
		{"unseeded mismatch", unseeded, "another answer", chain.ReasonNondeterministicMismatch,
			textNondeterministic, answerSHA, false, "gpt-4o", "gpt-4o"},
		{"legacy names, match", legacySeeded, "abc", chain.ReasonMatch, "", abcSHA256, true, "gpt-4o", "gpt-4o"},
		{"legacy names, deterministic mismatch", legacySeeded, "abd", chain.ReasonOutputMismatch,
			textDeterministic("'gpt-4o'"), abcSHA256, true, "gpt-4o", "gpt-4o"},
		{"legacy names, unseeded mismatch", legacyUnseeded, "abd", chain.ReasonNondeterministicMismatch,
			textNondeterministic, abcSHA256, false, "m1", ""},
		// Neither name wins when they differ: the documented value does not match, nor the earlier one.
		{"documented and legacy names differ", both, "abc", chain.ReasonConflictingReplayContext,
			textConflict("cairn.replay.output_hash", "cairn.replay.output_sha256"), "", false, "", ""},
		{"documented and legacy names differ, the legacy output replayed", both, "", chain.ReasonConflictingReplayContext,
			textConflict("cairn.replay.output_hash", "cairn.replay.output_sha256"), "", false, "", ""},
		{"no replay context", sealWithAttributes(t, map[string]any{"gen_ai.request.model": "gpt-4o"}), "x",
			chain.ReasonNoReplayContext, textNoContext, "", false, "", "gpt-4o"},
		{"empty attributes", rawEntry(`{"attributes":{}}`), "x", chain.ReasonNoReplayContext, textNoContext, "", false, "", ""},
		{"response model when no request model", rawEntry(`{"attributes":{"gen_ai.response.model":"r"}}`), "x",
			chain.ReasonNoReplayContext, textNoContext, "", false, "", "r"},
		{"seed without flag counts as deterministic", seedOnly, "abc", chain.ReasonMatch, "", abcSHA256, true, "", ""},
		{"seed without flag, mismatch, no model version", seedOnly, "abd", chain.ReasonOutputMismatch,
			textDeterministic("no model version recorded"), abcSHA256, true, "", ""},
		{"model version of the wrong type is ignored", rawEntry(`{"attributes":{"cairn.replay.output_hash":"` + abcSHA256 + `","cairn.replay.model_version":5}}`),
			"abc", chain.ReasonMatch, "", abcSHA256, false, "", ""},
		{"nil entry", nil, "x", chain.ReasonMalformedEntry, "no chain entry to compare with", "", false, "", ""},
		{"empty body", rawEntry(``), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"body not JSON", rawEntry(`{"attributes":`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"body an array", rawEntry(`[1,2]`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"body null", rawEntry(`null`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"no attributes", rawEntry(`{"name":"x"}`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"attributes null", rawEntry(`{"attributes":null}`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"attributes a string", rawEntry(`{"attributes":"x"}`), "x", chain.ReasonMalformedEntry, "chain entry body is not a JSON object with an attributes object", "", false, "", ""},
		{"hash a number", rawEntry(`{"attributes":{"cairn.replay.output_hash":12}}`), "x", chain.ReasonMalformedEntry, malformedHash, "", false, "", ""},
		{"hash null", rawEntry(`{"attributes":{"cairn.replay.output_hash":null}}`), "x", chain.ReasonMalformedEntry, malformedHash, "", false, "", ""},
		{"hash upper case", rawEntry(`{"attributes":{"cairn.replay.output_hash":"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}}`),
			"abc", chain.ReasonMalformedEntry, malformedHash, "", false, "", ""},
		{"hash short", rawEntry(`{"attributes":{"cairn.replay.output_hash":"ba78"}}`), "x", chain.ReasonMalformedEntry, malformedHash, "", false, "", ""},
		{"legacy hash short", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"ba78"}}`), "x", chain.ReasonMalformedEntry,
			"cairn.replay.output_sha256 is not a string of 64 lowercase hex characters", "", false, "", ""},
		{"flag a string", rawEntry(`{"attributes":{"cairn.replay.output_hash":"` + abcSHA256 + `","cairn.replay.deterministic":"true"}}`),
			"abc", chain.ReasonMalformedEntry, "cairn.replay.deterministic is not a boolean", abcSHA256, false, "", ""},
		{"flag null", rawEntry(`{"attributes":{"cairn.replay.output_hash":"` + abcSHA256 + `","cairn.replay.deterministic":null}}`),
			"abc", chain.ReasonMalformedEntry, "cairn.replay.deterministic is not a boolean", abcSHA256, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chain.VerifyReplay(tc.entry, tc.replayed)
			checkVerdict(t, r, tc.code, tc.reason, tc.original, tc.det, tc.mv, tc.model)
			if want := chain.RecordReplayContext("", tc.replayed, "", nil, 0, 0)[chain.AttrReplayOutputHash]; r.ReplayHash != want {
				t.Errorf("replay hash %s, want %s", r.ReplayHash, want)
			}
			if tc.entry != nil && r.Seq != tc.entry.Seq {
				t.Errorf("seq %d, want %d", r.Seq, tc.entry.Seq)
			}
		})
	}
}

func TestVerifyReplayThroughExporter(t *testing.T) {
	// A replay context set as OpenTelemetry attributes round-trips through the exporter.
	s := &chainSealer{}
	tracer := newTracer(t, chain.NewSpanExporter(s))
	seed := int64(1) << 60 // beyond 2^53: sealed as a string, still a seed
	ctxAttrs := chain.RecordReplayContext("prompt", "output", "llama-3", &seed, 0, 1)
	_, span := tracer.Start(context.Background(), "chat llama-3", trace.WithAttributes(
		attribute.String("gen_ai.request.model", "llama-3"),
		attribute.String(chain.AttrReplayOutputHash, ctxAttrs[chain.AttrReplayOutputHash].(string)),
		attribute.String(chain.AttrReplayModelVersion, "llama-3-v2"),
		attribute.Int64(chain.AttrReplaySeed, seed),
		attribute.Bool(chain.AttrReplayDeterministic, true),
	))
	span.End()
	entries, _ := s.sealed()
	if len(entries) != 1 {
		t.Fatalf("sealed %d entries", len(entries))
	}
	verifyChain(t, entries)
	if r := chain.VerifyReplay(entries[0], "output"); !r.Match || !r.Deterministic || r.Seq != 1 ||
		r.ModelVersion == nil || *r.ModelVersion != "llama-3-v2" || r.Model == nil || *r.Model != "llama-3" {
		t.Errorf("VerifyReplay = %+v, want a deterministic match on seq 1", r)
	}
	if r := chain.VerifyReplay(entries[0], "outpuT"); r.ReasonCode != chain.ReasonOutputMismatch {
		t.Errorf("VerifyReplay of a different output = %+v", r)
	}
}

func TestReplayResultToMapMatchesJSON(t *testing.T) {
	hash, mv, text := abcSHA256, "gpt-4o-2024-08-06", "why"
	tests := map[string]chain.ReplayResult{
		"match": {Seq: 3, Match: true, Deterministic: true, ReasonCode: chain.ReasonMatch,
			OriginalHash: &hash, ReplayHash: abcSHA256, ModelVersion: &mv},
		"no context": {Seq: 4, ReasonCode: chain.ReasonNoReplayContext, Reason: &text, ReplayHash: abcSHA256, Model: &mv},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var fromJSON map[string]any
			if err := json.Unmarshal(raw, &fromJSON); err != nil {
				t.Fatal(err)
			}
			m := r.ToMap()
			if len(m) != len(fromJSON) {
				t.Fatalf("ToMap %v, JSON %v", m, fromJSON)
			}
			for k, v := range fromJSON {
				got, ok := m[k]
				if n, isNum := v.(float64); isNum {
					v = int64(n)
				}
				if !ok || !reflect.DeepEqual(got, v) {
					t.Errorf("%s: ToMap has %#v, JSON %#v", k, got, v)
				}
			}
		})
	}
}
