"""record_replay_context: the replay attributes of one model call, as pkg/chain records them."""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any, Dict, Optional, Sequence, Union

from ._names import (
    ATTR_REPLAY_DETERMINISTIC,
    ATTR_REPLAY_MODEL_VERSION,
    ATTR_REPLAY_OUTPUT_HASH,
    ATTR_REPLAY_PROMPT_HASH,
    ATTR_REPLAY_SEED,
    ATTR_REPLAY_TEMPERATURE,
    ATTR_REPLAY_TOP_P,
)

MAX_SAFE_INTEGER = 2**53 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _utf8(name: str, s: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{name} is not valid Unicode (a lone surrogate at {e.start})") from None


def _json_float(f: float) -> Union[float, str]:
    """f, or the string pkg/chain seals when canonical JSON cannot hold it."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if MAX_SAFE_INTEGER < abs(f) < 1e21:
        # Go's FormatFloat(f, 'f', -1, 64): the shortest digits that round-trip, as an
        # integer (above 2^53 a float's spacing is 2 or more, so the shortest digits never
        # need a fraction); repr gives the same shortest digits, "9007199254740992.0"
        # among them.
        text = format(Decimal(repr(f)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f


def _json_int(n: int) -> Union[int, str]:
    """n, or its decimal string when it is beyond ±(2^53−1), as pkg/chain seals it."""
    return str(n) if abs(n) > MAX_SAFE_INTEGER else n


def _number(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(v).__name__}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{name} {v} is beyond the range of a float") from None


def _prompt_bytes(prompt: Any) -> bytes:
    if isinstance(prompt, str):
        return _utf8("prompt", prompt)
    if isinstance(prompt, (list, tuple)):
        # A list of messages: the original product's one encoding of it.
        text = json.dumps(list(prompt), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return _utf8("prompt", text)
    raise TypeError(f"prompt must be a str or a list of messages, not {type(prompt).__name__}")


def record_replay_context(
    prompt: Union[str, Sequence[Any]],
    output: str,
    model: str,
    seed: Optional[int] = None,
    temperature: float = 1.0,
    top_p: float = 1.0,
    *,
    model_version: Optional[str] = None,
) -> Dict[str, Any]:
    """The attributes to seal with a model call so it can be replayed and checked later.

    Exactly these, as pkg/chain RecordReplayContext returns them:

    * cairn.replay.prompt_hash and cairn.replay.output_hash: the hex SHA-256 of the
      prompt and of the output as UTF-8 (a list of messages is hashed as
      json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False));
    * cairn.replay.seed, only when seed is not None;
    * cairn.replay.temperature and cairn.replay.top_p, as floats (the defaults, 1.0,
      are the usual providers' defaults: pass the values the call used);
    * cairn.replay.model_version: model_version when given and not empty, else model;
    * cairn.replay.deterministic: True exactly when seed is not None.

    Numbers JSON cannot hold exactly are strings, as pkg/chain seals them: a seed beyond
    ±(2^53−1) is its decimal string; a temperature or top_p that is NaN or infinite is
    "NaN", "+Inf" or "-Inf", and one above 2^53−1 in magnitude (below 1e21) its exact
    decimal integer.

    Raises TypeError for a value of the wrong type, ValueError for a seed outside the
    signed 64-bit range (the Go helpers' seed type) or text with a lone surrogate.
    """
    prompt_bytes = _prompt_bytes(prompt)
    if not isinstance(output, str):
        raise TypeError(f"output must be a str, not {type(output).__name__}")
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, not {type(model).__name__}")
    if model_version is not None and not isinstance(model_version, str):
        raise TypeError(f"model_version must be a str or None, not {type(model_version).__name__}")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
        if not INT64_MIN <= seed <= INT64_MAX:
            raise ValueError(f"seed {seed} is outside the signed 64-bit range")
    temperature_f = _number("temperature", temperature)
    top_p_f = _number("top_p", top_p)
    version = model_version or model
    _utf8("model", model)
    _utf8("model_version", version)
    attrs: Dict[str, Any] = {
        ATTR_REPLAY_PROMPT_HASH: sha256_hex(prompt_bytes),
        ATTR_REPLAY_OUTPUT_HASH: sha256_hex(_utf8("output", output)),
    }
    if seed is not None:
        attrs[ATTR_REPLAY_SEED] = _json_int(seed)
    attrs[ATTR_REPLAY_TEMPERATURE] = _json_float(temperature_f)
    attrs[ATTR_REPLAY_TOP_P] = _json_float(top_p_f)
    attrs[ATTR_REPLAY_MODEL_VERSION] = version
    attrs[ATTR_REPLAY_DETERMINISTIC] = seed is not None
    return attrs

