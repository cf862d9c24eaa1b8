package chain

import (
	"encoding/json"
	"reflect"
)

// Attribute keys the original product, BIJOTEL, seals for the same replay context
// (its replay recorder, BIJOTEL 2.7 and later). An app instrumented for it seals these,
// and VerifyReplay reads each as an alias of its Cairn counterpart, so its entries can be
// replay-checked as they are: sealed bodies keep the names they were received with.
const (
	// AttrBijotelReplayPromptHash is the original's name of AttrReplayPromptHash.
	AttrBijotelReplayPromptHash = "bijotel.replay.prompt_hash"
	// AttrBijotelReplayOutputHash is the original's name of AttrReplayOutputHash.
	AttrBijotelReplayOutputHash = "bijotel.replay.output_hash"
	// AttrBijotelReplaySeed is the original's name of AttrReplaySeed.
	AttrBijotelReplaySeed = "bijotel.replay.seed"
	// AttrBijotelReplayTemperature is the original's name of AttrReplayTemperature.
	AttrBijotelReplayTemperature = "bijotel.replay.temperature"
	// AttrBijotelReplayTopP is the original's name of AttrReplayTopP.
	AttrBijotelReplayTopP = "bijotel.replay.top_p"
	// AttrBijotelReplayModelVersion is the original's name of AttrReplayModelVersion.
	AttrBijotelReplayModelVersion = "bijotel.replay.model_version"
	// AttrBijotelReplayDeterministic is the original's name of AttrReplayDeterministic.
	AttrBijotelReplayDeterministic = "bijotel.replay.deterministic"
)

// replayNames lists every replay attribute under each name VerifyReplay reads for it:
// the documented name first, then Cairn's earlier name if there was one, then the
// original product's. The order only says which name a message mentions: an entry that
// holds one attribute under two names with different values is refused (see
// conflictingNames), so whichever name is read, the value is the same.
var replayNames = [][]string{
	{AttrReplayOutputHash, AttrReplayOutputSHA256, AttrBijotelReplayOutputHash},
	{AttrReplayDeterministic, AttrBijotelReplayDeterministic},
	{AttrReplaySeed, AttrBijotelReplaySeed},
	{AttrReplayModelVersion, AttrReplayModel, AttrBijotelReplayModelVersion},
	{AttrReplayPromptHash, AttrReplayPromptSHA256, AttrBijotelReplayPromptHash},
	{AttrReplayTemperature, AttrBijotelReplayTemperature},
	{AttrReplayTopP, AttrBijotelReplayTopP},
}

// namesOf returns the names of the replay attribute documented as key, key first.
func namesOf(key string) []string {
	for _, names := range replayNames {
		if names[0] == key {
			return names
		}
	}
	return []string{key}
}

// conflictingNames returns the first two names of one replay attribute that attrs holds
// with different values (compared as JSON values, so 1 and 1.0 are equal), and ok false
// when there are none. Nothing Cairn writes holds one attribute twice; an app that writes
// both its names during a migration writes the same value under each.
func conflictingNames(attrs map[string]json.RawMessage) (a, b string, ok bool) {
	for _, names := range replayNames {
		first := ""
		var want any
		for _, name := range names {
			raw, present := attrs[name]
			if !present {
				continue
			}
			var v any
			if json.Unmarshal(raw, &v) != nil {
				v = string(raw) // not JSON: compared as bytes
			}
			if first == "" {
				first, want = name, v
				continue
			}
			if !reflect.DeepEqual(v, want) {
				return first, name, true
			}
		}
	}
	return "", "", false
}

// lookup returns the first of names that attrs holds, with its raw value; ok is false when
// attrs holds none of them.
func lookup(attrs map[string]json.RawMessage, names ...string) (name string, raw json.RawMessage, ok bool) {
	for _, n := range names {
		if raw, ok := attrs[n]; ok {
			return n, raw, true
		}
	}
	return "", nil, false
}
