"""The replay attribute names and the reason codes, as pkg/chain names them."""

from typing import Tuple

# The replay attributes record_replay_context writes and verify_replay reads.
ATTR_REPLAY_PROMPT_HASH = "cairn.replay.prompt_hash"
ATTR_REPLAY_OUTPUT_HASH = "cairn.replay.output_hash"
ATTR_REPLAY_SEED = "cairn.replay.seed"
ATTR_REPLAY_TEMPERATURE = "cairn.replay.temperature"
ATTR_REPLAY_TOP_P = "cairn.replay.top_p"
ATTR_REPLAY_MODEL_VERSION = "cairn.replay.model_version"
ATTR_REPLAY_DETERMINISTIC = "cairn.replay.deterministic"

# Names earlier Cairn releases sealed; read, never written.
ATTR_REPLAY_PROMPT_SHA256 = "cairn.replay.prompt_sha256"
ATTR_REPLAY_OUTPUT_SHA256 = "cairn.replay.output_sha256"
ATTR_REPLAY_MODEL = "cairn.replay.model"

# The original product's names (BIJOTEL 2.7 and later); read as aliases.
ATTR_BIJOTEL_REPLAY_PROMPT_HASH = "bijotel.replay.prompt_hash"
ATTR_BIJOTEL_REPLAY_OUTPUT_HASH = "bijotel.replay.output_hash"
ATTR_BIJOTEL_REPLAY_SEED = "bijotel.replay.seed"
ATTR_BIJOTEL_REPLAY_TEMPERATURE = "bijotel.replay.temperature"
ATTR_BIJOTEL_REPLAY_TOP_P = "bijotel.replay.top_p"
ATTR_BIJOTEL_REPLAY_MODEL_VERSION = "bijotel.replay.model_version"
ATTR_BIJOTEL_REPLAY_DETERMINISTIC = "bijotel.replay.deterministic"

# Every replay attribute under each name verify_replay reads for it, the documented one
# first (pkg/chain replayNames, in the same order).
_REPLAY_NAMES: Tuple[Tuple[str, ...], ...] = (
    (ATTR_REPLAY_OUTPUT_HASH, ATTR_REPLAY_OUTPUT_SHA256, ATTR_BIJOTEL_REPLAY_OUTPUT_HASH),
    (ATTR_REPLAY_DETERMINISTIC, ATTR_BIJOTEL_REPLAY_DETERMINISTIC),
    (ATTR_REPLAY_SEED, ATTR_BIJOTEL_REPLAY_SEED),
    (ATTR_REPLAY_MODEL_VERSION, ATTR_REPLAY_MODEL, ATTR_BIJOTEL_REPLAY_MODEL_VERSION),
    (ATTR_REPLAY_PROMPT_HASH, ATTR_REPLAY_PROMPT_SHA256, ATTR_BIJOTEL_REPLAY_PROMPT_HASH),
    (ATTR_REPLAY_TEMPERATURE, ATTR_BIJOTEL_REPLAY_TEMPERATURE),
    (ATTR_REPLAY_TOP_P, ATTR_BIJOTEL_REPLAY_TOP_P),
)

# Reason codes (ReplayResult.reason_code), as POST /api/replay/verify answers them.
REASON_MATCH = "match"
REASON_OUTPUT_MISMATCH = "output_mismatch"
REASON_NONDETERMINISTIC_MISMATCH = "nondeterministic_mismatch"
REASON_NO_REPLAY_CONTEXT = "no_replay_context"
REASON_MALFORMED_ENTRY = "malformed_entry"
REASON_CONFLICTING_REPLAY_CONTEXT = "conflicting_replay_context"
# Python only: the replayed output is neither str nor bytes (Go's takes a string).
REASON_MALFORMED_REPLAY = "malformed_replay"
