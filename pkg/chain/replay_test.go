package chain_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
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
	tests := []struct {
		name string
		seed *int64
		want map[string]any
	}{
		{"seeded", &seed, map[string]any{
			chain.AttrReplayPromptSHA256: abcSHA256, chain.AttrReplayOutputSHA256: emptySHA256,
			chain.AttrReplayModel: "gpt-4o", chain.AttrReplayTemperature: 0.0, chain.AttrReplayTopP: 1.0,
			chain.AttrReplaySeed: int64(42), chain.AttrReplayDeterministic: true,
		}},
		{"no seed", nil, map[string]any{
			chain.AttrReplayPromptSHA256: abcSHA256, chain.AttrReplayOutputSHA256: emptySHA256,
			chain.AttrReplayModel: "gpt-4o", chain.AttrReplayTemperature: 0.0, chain.AttrReplayTopP: 1.0,
			chain.AttrReplayDeterministic: false,
		}},
		{"seed beyond 2^53", &bigSeed, map[string]any{
			chain.AttrReplayPromptSHA256: abcSHA256, chain.AttrReplayOutputSHA256: emptySHA256,
			chain.AttrReplayModel: "gpt-4o", chain.AttrReplayTemperature: 0.0, chain.AttrReplayTopP: 1.0,
			chain.AttrReplaySeed: "4611686018427387904", chain.AttrReplayDeterministic: true,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chain.RecordReplayContext("abc", "", "gpt-4o", tc.seed, 0, 1)
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

func TestVerifyReplay(t *testing.T) {
	seed := int64(7)
	seeded := sealWithAttributes(t, chain.RecordReplayContext("p", "the answer", "gpt-4o", &seed, 0, 1))
	unseeded := sealWithAttributes(t, chain.RecordReplayContext("p", "the answer", "gpt-4o", nil, 0.7, 0.9))
	answerSHA := chain.RecordReplayContext("", "the answer", "", nil, 0, 0)[chain.AttrReplayOutputSHA256]
	seedOnly := rawEntry(`{"attributes":{"cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.seed":3}}`)

	tests := []struct {
		name     string
		entry    *protocol.Entry
		replayed string
		reason   string
		det      bool
		model    string
	}{
		{"deterministic match", seeded, "the answer", chain.ReasonMatch, true, "gpt-4o"},
		{"deterministic mismatch", seeded, "another answer", chain.ReasonOutputMismatch, true, "gpt-4o"},
		{"unseeded match", unseeded, "the answer", chain.ReasonMatch, false, "gpt-4o"},
		{"unseeded mismatch", unseeded, "another answer", chain.ReasonNondeterministicMismatch, false, "gpt-4o"},
		{"no replay context", sealWithAttributes(t, map[string]any{"gen_ai.request.model": "gpt-4o"}), "x", chain.ReasonNoReplayContext, false, ""},
		{"empty attributes", rawEntry(`{"attributes":{}}`), "x", chain.ReasonNoReplayContext, false, ""},
		{"seed without flag counts as deterministic", seedOnly, "abc", chain.ReasonMatch, true, ""},
		{"seed without flag, mismatch", seedOnly, "abd", chain.ReasonOutputMismatch, true, ""},
		{"model of the wrong type is ignored", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.model":5}}`), "abc", chain.ReasonMatch, false, ""},
		{"nil entry", nil, "x", chain.ReasonMalformedEntry, false, ""},
		{"empty body", rawEntry(``), "x", chain.ReasonMalformedEntry, false, ""},
		{"body not JSON", rawEntry(`{"attributes":`), "x", chain.ReasonMalformedEntry, false, ""},
		{"body an array", rawEntry(`[1,2]`), "x", chain.ReasonMalformedEntry, false, ""},
		{"body null", rawEntry(`null`), "x", chain.ReasonMalformedEntry, false, ""},
		{"no attributes", rawEntry(`{"name":"x"}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"attributes null", rawEntry(`{"attributes":null}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"attributes a string", rawEntry(`{"attributes":"x"}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"hash a number", rawEntry(`{"attributes":{"cairn.replay.output_sha256":12}}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"hash null", rawEntry(`{"attributes":{"cairn.replay.output_sha256":null}}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"hash upper case", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}}`), "abc", chain.ReasonMalformedEntry, false, ""},
		{"hash short", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"ba78"}}`), "x", chain.ReasonMalformedEntry, false, ""},
		{"flag a string", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.deterministic":"true"}}`), "abc", chain.ReasonMalformedEntry, false, ""},
		{"flag null", rawEntry(`{"attributes":{"cairn.replay.output_sha256":"` + abcSHA256 + `","cairn.replay.deterministic":null}}`), "abc", chain.ReasonMalformedEntry, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chain.VerifyReplay(tc.entry, tc.replayed)
			if r.Reason != tc.reason || r.Match != (tc.reason == chain.ReasonMatch) || r.Deterministic != tc.det || r.Model != tc.model {
				t.Fatalf("VerifyReplay = %+v, want reason %s, deterministic %v, model %q", r, tc.reason, tc.det, tc.model)
			}
			if want := chain.RecordReplayContext("", tc.replayed, "", nil, 0, 0)[chain.AttrReplayOutputSHA256]; r.ReplayedOutputSHA256 != want {
				t.Errorf("replayed hash %s, want %s", r.ReplayedOutputSHA256, want)
			}
			if tc.entry != nil && r.Seq != tc.entry.Seq {
				t.Errorf("seq %d, want %d", r.Seq, tc.entry.Seq)
			}
		})
	}
	if r := chain.VerifyReplay(seeded, "x"); r.ExpectedOutputSHA256 != answerSHA {
		t.Errorf("expected hash %s, want %s", r.ExpectedOutputSHA256, answerSHA)
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
		attribute.String(chain.AttrReplayOutputSHA256, ctxAttrs[chain.AttrReplayOutputSHA256].(string)),
		attribute.String(chain.AttrReplayModel, "llama-3"),
		attribute.Int64(chain.AttrReplaySeed, seed),
		attribute.Bool(chain.AttrReplayDeterministic, true),
	))
	span.End()
	entries, _ := s.sealed()
	if len(entries) != 1 {
		t.Fatalf("sealed %d entries", len(entries))
	}
	verifyChain(t, entries)
	if r := chain.VerifyReplay(entries[0], "output"); !r.Match || !r.Deterministic || r.Model != "llama-3" || r.Seq != 1 {
		t.Errorf("VerifyReplay = %+v, want a deterministic match on seq 1", r)
	}
	if r := chain.VerifyReplay(entries[0], "outpuT"); r.Reason != chain.ReasonOutputMismatch {
		t.Errorf("VerifyReplay of a different output = %+v", r)
	}
}

func TestReplayResultToMapMatchesJSON(t *testing.T) {
	r := chain.ReplayResult{Seq: 3, Match: true, Deterministic: true, Reason: chain.ReasonMatch, Model: "m",
		ExpectedOutputSHA256: abcSHA256, ReplayedOutputSHA256: abcSHA256}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON map[string]any
	if err := json.Unmarshal(raw, &fromJSON); err != nil {
		t.Fatal(err)
	}
	m := r.ToMap()
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if !reflect.DeepEqual(keys(m), keys(fromJSON)) {
		t.Fatalf("ToMap keys %v, JSON keys %v", keys(m), keys(fromJSON))
	}
	if m["seq"] != int64(3) || m["match"] != true || m["reason"] != "match" || m["expected_output_sha256"] != abcSHA256 {
		t.Errorf("ToMap = %v", m)
	}
}
