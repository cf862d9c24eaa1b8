package chain

import (
	"crypto/sha256"
	"encoding/hex"
)

// Attribute keys of the replay context, the documented set RecordReplayContext returns
// and VerifyReplay reads.
const (
	// AttrReplayPromptHash is the hex SHA-256 of the prompt, as UTF-8.
	AttrReplayPromptHash = "cairn.replay.prompt_hash"
	// AttrReplayOutputHash is the hex SHA-256 of the output, as UTF-8: what a replayed
	// output is compared with.
	AttrReplayOutputHash = "cairn.replay.output_hash"
	// AttrReplaySeed is the sampling seed; present only when the call had one.
	AttrReplaySeed = "cairn.replay.seed"
	// AttrReplayTemperature is the sampling temperature.
	AttrReplayTemperature = "cairn.replay.temperature"
	// AttrReplayTopP is the nucleus sampling parameter.
	AttrReplayTopP = "cairn.replay.top_p"
	// AttrReplayModelVersion is the exact model version that produced the output (by
	// default the model's name as the call gave it).
	AttrReplayModelVersion = "cairn.replay.model_version"
	// AttrReplayDeterministic is true exactly when the call was made with a seed.
	AttrReplayDeterministic = "cairn.replay.deterministic"
)

// Attribute keys that earlier Cairn releases sealed instead of the documented ones.
// Chains are immutable, so VerifyReplay still reads them, each only when its documented
// counterpart is absent. Nothing writes them any more.
const (
	// Deprecated: sealed by earlier releases; use AttrReplayPromptHash.
	AttrReplayPromptSHA256 = "cairn.replay.prompt_sha256"
	// Deprecated: sealed by earlier releases; use AttrReplayOutputHash.
	AttrReplayOutputSHA256 = "cairn.replay.output_sha256"
	// Deprecated: sealed by earlier releases; use AttrReplayModelVersion.
	AttrReplayModel = "cairn.replay.model"
)

// ReplayOption changes what RecordReplayContext records.
type ReplayOption func(*replayContext)

// replayContext holds what the options set.
type replayContext struct {
	modelVersion string
}

// WithModelVersion records version as the model version (cairn.replay.model_version)
// instead of the model's name, for example "gpt-4o-2024-08-06" for a call to "gpt-4o".
// An empty version keeps the default.
func WithModelVersion(version string) ReplayOption {
	return func(c *replayContext) { c.modelVersion = version }
}

// RecordReplayContext returns the attributes to seal with a model call so it can be
// replayed and checked later with VerifyReplay, exactly these:
//
//   - cairn.replay.prompt_hash and cairn.replay.output_hash: the hex SHA-256 of prompt
//     and of output (for a list of messages, hash one canonical JSON encoding of it);
//   - cairn.replay.seed, only when seed is not nil;
//   - cairn.replay.temperature and cairn.replay.top_p;
//   - cairn.replay.model_version: model, unless WithModelVersion gives the version;
//   - cairn.replay.deterministic: true exactly when seed is not nil.
//
// Merge them into the span's attributes. Numbers JSON cannot hold exactly (a seed beyond
// ±(2^53−1), a non-finite temperature) are given as strings, by the rules SpanExporter
// states.
func RecordReplayContext(prompt, output, model string, seed *int64, temperature, topP float64, opts ...ReplayOption) map[string]any {
	c := replayContext{modelVersion: model}
	for _, o := range opts {
		o(&c)
	}
	if c.modelVersion == "" {
		c.modelVersion = model
	}
	m := map[string]any{
		AttrReplayPromptHash:    sha256Hex(prompt),
		AttrReplayOutputHash:    sha256Hex(output),
		AttrReplayTemperature:   jsonFloat(temperature),
		AttrReplayTopP:          jsonFloat(topP),
		AttrReplayModelVersion:  c.modelVersion,
		AttrReplayDeterministic: seed != nil,
	}
	if seed != nil {
		m[AttrReplaySeed] = jsonInt(*seed)
	}
	return m
}

// sha256Hex is the hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
