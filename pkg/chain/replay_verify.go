package chain

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// Reason codes of a ReplayResult (its ReasonCode), for programs; Reason says the same
// to people.
const (
	// ReasonMatch: the replayed output hashes to the recorded output hash.
	ReasonMatch = "match"
	// ReasonOutputMismatch: the hashes differ and the call was recorded with a seed, so
	// the replay was expected to reproduce it. Before suspecting tampering, check that
	// the replay ran against the same model version and with the same prompt.
	ReasonOutputMismatch = "output_mismatch"
	// ReasonNondeterministicMismatch: the hashes differ, but the call was recorded
	// without a seed. Sampling without a seed is expected to vary, so this is no
	// evidence of tampering; it only says the replay could not confirm the output.
	ReasonNondeterministicMismatch = "nondeterministic_mismatch"
	// ReasonNoReplayContext: the entry's attributes have no recorded output hash
	// (cairn.replay.output_hash, the earlier cairn.replay.output_sha256, or the original
	// product's bijotel.replay.output_hash).
	ReasonNoReplayContext = "no_replay_context"
	// ReasonMalformedEntry: there is no entry, its canonical body is not a JSON object
	// with an attributes object, or a replay attribute has the wrong type (an output
	// hash that is not 64 lowercase hex characters, a deterministic flag that is not a
	// boolean).
	ReasonMalformedEntry = "malformed_entry"
	// ReasonConflictingReplayContext: the entry holds one replay attribute under two of
	// its names (Cairn's, Cairn's earlier one, the original product's bijotel.replay.*)
	// with different values, for example two different output hashes. Neither is chosen:
	// a span that says two things about its output is no evidence for either, and picking
	// one would let it match whichever output suits.
	ReasonConflictingReplayContext = "conflicting_replay_context"
)

// The advisory texts of Reason. The deterministic mismatch's is built by
// outputMismatchText, which names the model version.
const (
	textNondeterministicMismatch = "output hash mismatch — original call did not record a seed " +
		"(deterministic=false); replay drift is expected"
	textNoReplayContext = "chain entry has no " + AttrReplayOutputHash + " or " + AttrBijotelReplayOutputHash +
		" (replay metadata not attached)"
	textNoEntry     = "no chain entry to compare with"
	textBodyNotSpan = "chain entry body is not a JSON object with an attributes object"
)

// outputMismatchText is Reason for a deterministic mismatch: it names the recorded model
// version, quoted, or says none was recorded.
func outputMismatchText(modelVersion *string) string {
	mv := "no model version recorded"
	if modelVersion != nil {
		mv = "'" + *modelVersion + "'"
	}
	return "output hash mismatch — re-execute against the SAME model version that produced the original (" +
		mv + ") and verify the prompt hash before treating this as tampering"
}

// ReplayResult is VerifyReplay's verdict on one entry. Its first six members are the
// documented answer of replay verification; Seq, ReasonCode and Model are Cairn's
// additions.
type ReplayResult struct {
	// Match is true exactly when the replayed output hashes to the recorded output hash.
	Match bool `json:"match"`
	// OriginalHash is the recorded output hash, nil when the entry has no valid one.
	OriginalHash *string `json:"original_hash"`
	// ReplayHash is the hex SHA-256 of the replayed output.
	ReplayHash string `json:"replay_hash"`
	// Deterministic is whether the call was recorded as deterministic (with a seed).
	Deterministic bool `json:"deterministic"`
	// ModelVersion is the recorded model version (cairn.replay.model_version, the
	// earlier cairn.replay.model, or bijotel.replay.model_version), nil when the entry
	// records none.
	ModelVersion *string `json:"model_version"`
	// Reason is nil on a match, and otherwise says in words why there is none and what
	// to do about it.
	Reason *string `json:"reason"`
	// Seq is the entry's sequence number (0 when there is no entry).
	Seq int64 `json:"seq"`
	// ReasonCode is one of the Reason* constants: the verdict for programs.
	ReasonCode string `json:"reason_code"`
	// Model is the model the span names (gen_ai.request.model, else
	// gen_ai.response.model), nil when it names none.
	Model *string `json:"model"`
}

// ToMap returns the result as a map keyed by its JSON names; a nil member is a nil value.
func (r ReplayResult) ToMap() map[string]any {
	orNil := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{
		"match":         r.Match,
		"original_hash": orNil(r.OriginalHash),
		"replay_hash":   r.ReplayHash,
		"deterministic": r.Deterministic,
		"model_version": orNil(r.ModelVersion),
		"reason":        orNil(r.Reason),
		"seq":           r.Seq,
		"reason_code":   r.ReasonCode,
		"model":         orNil(r.Model),
	}
}

// verdict sets the result's reason code and its text and returns the result: no match.
func (r *ReplayResult) verdict(code, text string) ReplayResult {
	r.Match, r.ReasonCode, r.Reason = false, code, &text
	return *r
}

// VerifyReplay compares replayedOutput with the output recorded in entry's canonical
// body and says why they match or not. It never panics and never fails: a missing
// entry, an unreadable body or missing attributes are reasons in the result (see the
// Reason* constants).
//
// It reads each replay attribute under its documented name (AttrReplay*) or an alias:
// the name earlier Cairn releases sealed (cairn.replay.output_sha256, cairn.replay.model,
// cairn.replay.prompt_sha256) or the original product's (AttrBijotelReplay*,
// bijotel.replay.*), so entries sealed by either still verify. The call counts as
// deterministic when the deterministic flag is true, or, when no name of the flag is
// present, when a seed is present under either name.
//
// Where an entry holds one attribute under two names, the values must be equal (as JSON
// values): otherwise the verdict is ReasonConflictingReplayContext, whatever the replayed
// output, and neither value is reported. No name takes precedence over another, so an
// entry cannot record two output hashes and match whichever one a replay produces.
//
// VerifyReplay reads the body as it is. It does not check the entry's hashes or its
// place in the chain: verify the export the entry came from first.
func VerifyReplay(entry *protocol.Entry, replayedOutput string) ReplayResult {
	r := ReplayResult{ReplayHash: sha256Hex(replayedOutput)}
	if entry == nil {
		return r.verdict(ReasonMalformedEntry, textNoEntry)
	}
	r.Seq = entry.Seq
	var body struct {
		Attributes map[string]json.RawMessage `json:"attributes"`
	}
	if err := json.Unmarshal(entry.CanonicalBody, &body); err != nil || body.Attributes == nil {
		return r.verdict(ReasonMalformedEntry, textBodyNotSpan)
	}
	attrs := body.Attributes
	r.Model = stringAttr(attrs, "gen_ai.request.model", "gen_ai.response.model")
	if a, b, ok := conflictingNames(attrs); ok {
		return r.verdict(ReasonConflictingReplayContext, fmt.Sprintf(
			"%s and %s hold different values: the entry records one replay attribute twice, so neither is used", a, b))
	}
	// Informational: a value that is not a string is ignored.
	r.ModelVersion = stringAttr(attrs, namesOf(AttrReplayModelVersion)...)
	hashKey, rawHash, ok := lookup(attrs, namesOf(AttrReplayOutputHash)...)
	if !ok {
		return r.verdict(ReasonNoReplayContext, textNoReplayContext)
	}
	var original string
	if json.Unmarshal(rawHash, &original) != nil || !isLowerHex(original, sha256.Size*2) {
		return r.verdict(ReasonMalformedEntry, fmt.Sprintf("%s is not a string of %d lowercase hex characters", hashKey, sha256.Size*2))
	}
	r.OriginalHash = &original
	if flagKey, rawDet, ok := lookup(attrs, namesOf(AttrReplayDeterministic)...); ok {
		var det *bool // nil for JSON null, which is no more a boolean than a string is
		if json.Unmarshal(rawDet, &det) != nil || det == nil {
			return r.verdict(ReasonMalformedEntry, flagKey+" is not a boolean")
		}
		r.Deterministic = *det
	} else {
		_, _, r.Deterministic = lookup(attrs, namesOf(AttrReplaySeed)...)
	}
	switch {
	case original == r.ReplayHash:
		r.Match, r.ReasonCode = true, ReasonMatch
		return r
	case r.Deterministic:
		return r.verdict(ReasonOutputMismatch, outputMismatchText(r.ModelVersion))
	default:
		return r.verdict(ReasonNondeterministicMismatch, textNondeterministicMismatch)
	}
}

// stringAttr returns the first of keys present in attrs, if its value is a string; nil
// otherwise.
func stringAttr(attrs map[string]json.RawMessage, keys ...string) *string {
	_, raw, ok := lookup(attrs, keys...)
	var s string
	if !ok || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}
