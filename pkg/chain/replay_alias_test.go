package chain_test

import (
	"encoding/json"
	"testing"

	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// bijotelEntry is an entry whose body holds attrs, as the original product (BIJOTEL) or
// an app instrumented for it seals a model call.
func bijotelEntry(t *testing.T, attrs map[string]any) *protocol.Entry {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": "chat", "attributes": attrs})
	if err != nil {
		t.Fatal(err)
	}
	return &protocol.Entry{Seq: 4, CanonicalBody: body}
}

// TestVerifyReplayReadsTheOriginalsNames: the original product's bijotel.replay.*
// attributes are read as aliases of Cairn's, and an entry that holds one attribute under
// two names with different values is refused whichever output is replayed.
func TestVerifyReplayReadsTheOriginalsNames(t *testing.T) {
	// As the original's recorder seals a call with a seed, and without one.
	seeded := map[string]any{
		"bijotel.replay.prompt_hash": emptySHA256, "bijotel.replay.output_hash": abcSHA256,
		"bijotel.replay.temperature": 0.0, "bijotel.replay.top_p": 1.0, "bijotel.replay.model_version": "gpt-4o-2024-08-06",
		"bijotel.replay.deterministic": true, "bijotel.replay.seed": 7}
	unseeded := map[string]any{"bijotel.replay.output_hash": abcSHA256, "bijotel.replay.model_version": "m",
		"bijotel.replay.deterministic": false}
	// with returns base with extra's members added (or replaced).
	with := func(base map[string]any, extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	// An app instrumented for both products during a migration writes each value twice.
	dual := with(seeded, chain.RecordReplayContext("", "abc", "gpt-4o", new(int64(7)), 0, 1,
		chain.WithModelVersion("gpt-4o-2024-08-06")))
	conflict := textConflict
	const malformedHash = "bijotel.replay.output_hash is not a string of 64 lowercase hex characters"
	tests := map[string]struct {
		attrs    map[string]any
		replayed string
		code     string
		reason   string // "" on a match
		original string // "" when none is reported
		det      bool
		mv       string
	}{
		"deterministic match": {seeded, "abc", chain.ReasonMatch, "", abcSHA256, true, "gpt-4o-2024-08-06"},
		"deterministic mismatch": {seeded, "abd", chain.ReasonOutputMismatch, textDeterministic("'gpt-4o-2024-08-06'"),
			abcSHA256, true, "gpt-4o-2024-08-06"},
		"unseeded match":    {unseeded, "abc", chain.ReasonMatch, "", abcSHA256, false, "m"},
		"unseeded mismatch": {unseeded, "abd", chain.ReasonNondeterministicMismatch, textNondeterministic, abcSHA256, false, "m"},
		"a seed without the flag is deterministic": {map[string]any{"bijotel.replay.output_hash": abcSHA256, "bijotel.replay.seed": 1},
			"abd", chain.ReasonOutputMismatch, textDeterministic("no model version recorded"), abcSHA256, true, ""},
		"no flag and no seed is not deterministic": {map[string]any{"bijotel.replay.output_hash": abcSHA256},
			"abd", chain.ReasonNondeterministicMismatch, textNondeterministic, abcSHA256, false, ""},
		"the original's flag beside Cairn's seed": {map[string]any{"bijotel.replay.output_hash": abcSHA256,
			"bijotel.replay.deterministic": false, "cairn.replay.seed": 1},
			"abd", chain.ReasonNondeterministicMismatch, textNondeterministic, abcSHA256, false, ""},
		"no output hash under any name": {map[string]any{"bijotel.replay.model_version": "m"}, "abc",
			chain.ReasonNoReplayContext, textNoContext, "", false, "m"},
		"hash malformed": {map[string]any{"bijotel.replay.output_hash": "ABC"}, "abc",
			chain.ReasonMalformedEntry, malformedHash, "", false, ""},
		"flag not a boolean": {with(unseeded, map[string]any{"bijotel.replay.deterministic": "false"}), "abc",
			chain.ReasonMalformedEntry, "bijotel.replay.deterministic is not a boolean", abcSHA256, false, "m"},

		"both names, equal values, match": {dual, "abc", chain.ReasonMatch, "", abcSHA256, true, "gpt-4o-2024-08-06"},
		"both names, equal values, mismatch": {dual, "abd", chain.ReasonOutputMismatch,
			textDeterministic("'gpt-4o-2024-08-06'"), abcSHA256, true, "gpt-4o-2024-08-06"},
		"equal as JSON values: 1 and 1.0": {with(unseeded, map[string]any{"bijotel.replay.top_p": 1, "cairn.replay.top_p": 1.0}),
			"abc", chain.ReasonMatch, "", abcSHA256, false, "m"},

		// Two output hashes: neither is chosen, whichever output is replayed.
		"two output hashes, Cairn's output replayed": {with(seeded, map[string]any{"cairn.replay.output_hash": emptySHA256}), "",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.output_hash", "bijotel.replay.output_hash"), "", false, ""},
		"two output hashes, the original's output replayed": {with(seeded, map[string]any{"cairn.replay.output_hash": emptySHA256}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.output_hash", "bijotel.replay.output_hash"), "", false, ""},
		"earlier Cairn name and the original's differ": {with(unseeded, map[string]any{"cairn.replay.output_sha256": emptySHA256}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.output_sha256", "bijotel.replay.output_hash"), "", false, ""},
		"two names agree, the third differs": {with(seeded, map[string]any{"cairn.replay.output_hash": abcSHA256,
			"cairn.replay.output_sha256": emptySHA256}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.output_hash", "cairn.replay.output_sha256"), "", false, ""},
		"a hash and a number": {with(seeded, map[string]any{"cairn.replay.output_hash": 12}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.output_hash", "bijotel.replay.output_hash"), "", false, ""},
		// The flag decides between "tampering?" and "drift is expected": it cannot say both.
		"two flags": {with(seeded, map[string]any{"cairn.replay.deterministic": false}), "abd",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.deterministic", "bijotel.replay.deterministic"), "", false, ""},
		"two seeds": {with(seeded, map[string]any{"cairn.replay.seed": 8}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.seed", "bijotel.replay.seed"), "", false, ""},
		"two model versions": {with(seeded, map[string]any{"cairn.replay.model_version": "gpt-4o"}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.model_version", "bijotel.replay.model_version"), "", false, ""},
		"two prompt hashes": {with(seeded, map[string]any{"cairn.replay.prompt_hash": abcSHA256}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.prompt_hash", "bijotel.replay.prompt_hash"), "", false, ""},
		"two temperatures": {with(seeded, map[string]any{"cairn.replay.temperature": 0.5}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.temperature", "bijotel.replay.temperature"), "", false, ""},
		"two top_p": {with(seeded, map[string]any{"cairn.replay.top_p": 0.9}), "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.top_p", "bijotel.replay.top_p"), "", false, ""},
		"a conflict without any output hash": {map[string]any{"cairn.replay.seed": 1, "bijotel.replay.seed": 2}, "abc",
			chain.ReasonConflictingReplayContext, conflict("cairn.replay.seed", "bijotel.replay.seed"), "", false, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkVerdict(t, chain.VerifyReplay(bijotelEntry(t, tc.attrs), tc.replayed), tc.code, tc.reason, tc.original, tc.det, tc.mv, "")
		})
	}
}
