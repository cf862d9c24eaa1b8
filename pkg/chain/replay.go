package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Attribute keys of the replay context that RecordReplayContext returns.
const (
	AttrReplayPromptSHA256  = "cairn.replay.prompt_sha256"
	AttrReplayOutputSHA256  = "cairn.replay.output_sha256"
	AttrReplayModel         = "cairn.replay.model"
	AttrReplayTemperature   = "cairn.replay.temperature"
	AttrReplayTopP          = "cairn.replay.top_p"
	AttrReplaySeed          = "cairn.replay.seed"
	AttrReplayDeterministic = "cairn.replay.deterministic"
)

// Reasons a ReplayResult gives.
const (
	// ReasonMatch: the replayed output hashes to the recorded output_sha256.
	ReasonMatch = "match"
	// ReasonOutputMismatch: the hashes differ and the call was recorded with a seed, so
	// the replay was expected to reproduce it. This is the alarming case: the model,
	// its serving stack, or the recorded output is not what the entry says.
	ReasonOutputMismatch = "output_mismatch"
	// ReasonNondeterministicMismatch: the hashes differ, but the call was recorded
	// without a seed. Sampling without a seed is expected to vary, so this is no
	// evidence of tampering; it only says the replay could not confirm the output.
	ReasonNondeterministicMismatch = "nondeterministic_mismatch"
	// ReasonNoReplayContext: the entry's attributes have no recorded output hash
	// (cairn.replay.output_sha256); it was sealed without a replay context.
	ReasonNoReplayContext = "no_replay_context"
	// ReasonMalformedEntry: there is no entry, its canonical body is not a JSON object
	// with an attributes object, or a replay attribute has the wrong type (an output
	// hash that is not 64 lowercase hex characters, a deterministic flag that is not a
	// boolean).
	ReasonMalformedEntry = "malformed_entry"
)

// RecordReplayContext returns the attributes to seal with a model call so it can be
// replayed and checked later with VerifyReplay: the hex SHA-256 of prompt and of output,
// the model, temperature and top_p, the seed when there is one, and whether the call is
// deterministic (true exactly when seed is not nil). Merge them into the span's
// attributes. Numbers JSON cannot hold exactly (a seed beyond ±(2^53−1), a non-finite
// temperature) are given as strings, by the rules SpanExporter states.
func RecordReplayContext(prompt, output, model string, seed *int64, temperature, topP float64) map[string]any {
	m := map[string]any{
		AttrReplayPromptSHA256:  sha256Hex(prompt),
		AttrReplayOutputSHA256:  sha256Hex(output),
		AttrReplayModel:         model,
		AttrReplayTemperature:   jsonFloat(temperature),
		AttrReplayTopP:          jsonFloat(topP),
		AttrReplayDeterministic: seed != nil,
	}
	if seed != nil {
		m[AttrReplaySeed] = jsonInt(*seed)
	}
	return m
}

// ReplayResult is VerifyReplay's verdict on one entry.
type ReplayResult struct {
	// Seq is the entry's sequence number (0 when there is no entry).
	Seq int64 `json:"seq"`
	// Match is true exactly when Reason is ReasonMatch.
	Match bool `json:"match"`
	// Deterministic is whether the call was recorded as deterministic (with a seed).
	Deterministic bool `json:"deterministic"`
	// Reason is one of the Reason* constants.
	Reason string `json:"reason"`
	// Model is the recorded model, when the entry names one.
	Model string `json:"model"`
	// ExpectedOutputSHA256 is the recorded output hash, when there is a valid one.
	ExpectedOutputSHA256 string `json:"expected_output_sha256"`
	// ReplayedOutputSHA256 is the hex SHA-256 of the replayed output.
	ReplayedOutputSHA256 string `json:"replayed_output_sha256"`
}

// ToMap returns the result as a map keyed by its JSON names.
func (r ReplayResult) ToMap() map[string]any {
	return map[string]any{
		"seq":                    r.Seq,
		"match":                  r.Match,
		"deterministic":          r.Deterministic,
		"reason":                 r.Reason,
		"model":                  r.Model,
		"expected_output_sha256": r.ExpectedOutputSHA256,
		"replayed_output_sha256": r.ReplayedOutputSHA256,
	}
}

// VerifyReplay compares replayedOutput with the output recorded in entry's canonical
// body (its cairn.replay.output_sha256 attribute) and says why they match or not. It
// never panics and returns no error: a missing entry, an unreadable body or missing
// attributes are reasons in the result (see the Reason* constants).
//
// The call counts as deterministic when cairn.replay.deterministic is true, or, when that
// attribute is absent, when cairn.replay.seed is present.
//
// VerifyReplay reads the body as it is. It does not check the entry's hashes or its
// place in the chain: verify the export the entry came from first.
func VerifyReplay(entry *protocol.Entry, replayedOutput string) ReplayResult {
	r := ReplayResult{Reason: ReasonMalformedEntry, ReplayedOutputSHA256: sha256Hex(replayedOutput)}
	if entry == nil {
		return r
	}
	r.Seq = entry.Seq
	var body struct {
		Attributes map[string]json.RawMessage `json:"attributes"`
	}
	if err := json.Unmarshal(entry.CanonicalBody, &body); err != nil || body.Attributes == nil {
		return r
	}
	attrs := body.Attributes
	_ = json.Unmarshal(attrs[AttrReplayModel], &r.Model) // informational: ignored if not a string
	rawHash, ok := attrs[AttrReplayOutputSHA256]
	if !ok {
		r.Reason = ReasonNoReplayContext
		return r
	}
	var expected string
	if json.Unmarshal(rawHash, &expected) != nil || !isLowerHex(expected, sha256.Size*2) {
		return r
	}
	r.ExpectedOutputSHA256 = expected
	if rawDet, ok := attrs[AttrReplayDeterministic]; ok {
		var det *bool // nil for JSON null, which is no more a boolean than a string is
		if json.Unmarshal(rawDet, &det) != nil || det == nil {
			return r
		}
		r.Deterministic = *det
	} else {
		_, r.Deterministic = attrs[AttrReplaySeed]
	}
	switch {
	case expected == r.ReplayedOutputSHA256:
		r.Match, r.Reason = true, ReasonMatch
	case r.Deterministic:
		r.Reason = ReasonOutputMismatch
	default:
		r.Reason = ReasonNondeterministicMismatch
	}
	return r
}

// sha256Hex is the hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
