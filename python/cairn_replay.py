"""Replay helpers for Cairn chains: the Python side of pkg/chain's replay helpers.

Standard library only, Python 3.9 or later. Copy this one file into an application, or put
this directory on PYTHONPATH.

record_replay_context() builds the attributes to seal with a model call so that it can be
replayed and checked later; verify_replay() compares a replayed output with what a sealed
entry recorded and says why they match or not. Attribute names, hashes, values, reason
codes and reason texts are those of the Go helpers (pkg/chain RecordReplayContext and
VerifyReplay) byte for byte, and VerifyReplay's answer is what POST /api/replay/verify
returns: python/crosscheck_test.go runs both on the same inputs.

Example::

    attrs = record_replay_context(prompt, output, "gpt-4o", seed=42, temperature=0.0)
    span.set_attributes(attrs)            # then the span is sealed (OTLP or pkg/chain)
    ...
    entry = requests_get(f"{url}/api/chain/{seq}")      # its canonical_body_b64
    result = verify_replay(entry, replayed_output)
    print(result.match, result.reason_code, result.reason)
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "ATTR_REPLAY_PROMPT_HASH",
    "ATTR_REPLAY_OUTPUT_HASH",
    "ATTR_REPLAY_SEED",
    "ATTR_REPLAY_TEMPERATURE",
    "ATTR_REPLAY_TOP_P",
    "ATTR_REPLAY_MODEL_VERSION",
    "ATTR_REPLAY_DETERMINISTIC",
    "REASON_MATCH",
    "REASON_OUTPUT_MISMATCH",
    "REASON_NONDETERMINISTIC_MISMATCH",
    "REASON_NO_REPLAY_CONTEXT",
    "REASON_MALFORMED_ENTRY",
    "REASON_CONFLICTING_REPLAY_CONTEXT",
    "REASON_MALFORMED_REPLAY",
    "ReplayResult",
    "record_replay_context",
    "verify_replay",
]

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

_TEXT_NONDETERMINISTIC_MISMATCH = (
    "output hash mismatch \u2014 original call did not record a seed "
    "(deterministic=false); replay drift is expected"
)
_TEXT_NO_REPLAY_CONTEXT = (
    "chain entry has no " + ATTR_REPLAY_OUTPUT_HASH + " or " + ATTR_BIJOTEL_REPLAY_OUTPUT_HASH
    + " (replay metadata not attached)"
)
_TEXT_NO_ENTRY = "no chain entry to compare with"
_TEXT_BODY_NOT_SPAN = "chain entry body is not a JSON object with an attributes object"

_MAX_SAFE_INTEGER = 2**53 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _output_mismatch_text(model_version: Optional[str]) -> str:
    mv = "no model version recorded" if model_version is None else "'" + model_version + "'"
    return (
        "output hash mismatch \u2014 re-execute against the SAME model version that produced the original ("
        + mv
        + ") and verify the prompt hash before treating this as tampering"
    )


@dataclass
class ReplayResult:
    """verify_replay's verdict on one entry, with the members of pkg/chain ReplayResult.

    The first six are the documented answer of replay verification; seq, reason_code and
    model are Cairn's additions. to_dict() is what POST /api/replay/verify answers.
    """

    match: bool = False
    """True exactly when the replayed output hashes to the recorded output hash."""
    original_hash: Optional[str] = None
    """The recorded output hash, None when the entry has no valid one."""
    replay_hash: str = ""
    """The hex SHA-256 of the replayed output (its UTF-8 bytes)."""
    deterministic: bool = False
    """Whether the call was recorded as deterministic (with a seed)."""
    model_version: Optional[str] = None
    """The recorded model version, None when the entry records none."""
    reason: Optional[str] = None
    """None on a match; otherwise why there is none and what to do, in words."""
    seq: int = 0
    """The entry's sequence number (0 when there is none)."""
    reason_code: str = ""
    """One of the REASON_* codes: the verdict for programs."""
    model: Optional[str] = None
    """The model the span names (gen_ai.request.model, else gen_ai.response.model)."""

    def to_dict(self) -> Dict[str, Any]:
        """The result keyed by its JSON names, in pkg/chain's order; None is null."""
        return {
            "match": self.match,
            "original_hash": self.original_hash,
            "replay_hash": self.replay_hash,
            "deterministic": self.deterministic,
            "model_version": self.model_version,
            "reason": self.reason,
            "seq": self.seq,
            "reason_code": self.reason_code,
            "model": self.model,
        }

    def _verdict(self, code: str, text: str) -> "ReplayResult":
        self.match, self.reason_code, self.reason = False, code, text
        return self


# --- recording -----------------------------------------------------------------------


def _sha256_hex(data: bytes) -> str:
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
    if _MAX_SAFE_INTEGER < abs(f) < 1e21:
        # Go's FormatFloat(f, 'f', -1, 64): the shortest digits that round-trip, as an
        # integer (above 2^53 a float's spacing is 2 or more, so the shortest digits never
        # need a fraction); repr gives the same shortest digits, "9007199254740992.0"
        # among them.
        text = format(Decimal(repr(f)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f


def _json_int(n: int) -> Union[int, str]:
    """n, or its decimal string when it is beyond ±(2^53−1), as pkg/chain seals it."""
    return str(n) if abs(n) > _MAX_SAFE_INTEGER else n


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
    * cairn.replay.temperature and cairn.replay.top_p, as floats;
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
        if not _INT64_MIN <= seed <= _INT64_MAX:
            raise ValueError(f"seed {seed} is outside the signed 64-bit range")
    temperature_f = _number("temperature", temperature)
    top_p_f = _number("top_p", top_p)
    version = model_version or model
    _utf8("model", model)
    _utf8("model_version", version)
    attrs: Dict[str, Any] = {
        ATTR_REPLAY_PROMPT_HASH: _sha256_hex(prompt_bytes),
        ATTR_REPLAY_OUTPUT_HASH: _sha256_hex(_utf8("output", output)),
    }
    if seed is not None:
        attrs[ATTR_REPLAY_SEED] = _json_int(seed)
    attrs[ATTR_REPLAY_TEMPERATURE] = _json_float(temperature_f)
    attrs[ATTR_REPLAY_TOP_P] = _json_float(top_p_f)
    attrs[ATTR_REPLAY_MODEL_VERSION] = version
    attrs[ATTR_REPLAY_DETERMINISTIC] = seed is not None
    return attrs


# --- reading a sealed body as Go's encoding/json does ----------------------------------

_GO_REPLACE = "cairn_replay.go_replace"


def _go_replace(e: UnicodeDecodeError) -> Tuple[str, int]:
    # Go's decoder replaces each byte that does not start a valid UTF-8 sequence with
    # U+FFFD and goes on with the next byte.
    return "\ufffd", e.start + 1


try:
    codecs.lookup_error(_GO_REPLACE)
except LookupError:
    codecs.register_error(_GO_REPLACE, _go_replace)


class _Obj(dict):
    """A JSON object: its members (the last of repeated names wins) and their order."""

    pairs: List[Tuple[str, Any]]


class _Overflow:
    """A JSON number beyond float64's range: Go cannot decode it as a number."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Overflow) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class _NotJSON(ValueError):
    pass


def _parse_number(text: str) -> Any:
    f = float(text)
    return _Overflow(text) if math.isinf(f) else f


def _reject_constant(name: str) -> Any:
    raise _NotJSON(f"{name} is not JSON")


def _fix_surrogates(v: Any) -> Any:
    """v with every lone surrogate (from a \\uD8xx escape) as U+FFFD, as Go decodes it."""
    if isinstance(v, str):
        return _SURROGATE.sub("\ufffd", v)
    if isinstance(v, list):
        return [_fix_surrogates(x) for x in v]
    if isinstance(v, _Obj):
        return _object([(_fix_surrogates(k), _fix_surrogates(x)) for k, x in v.pairs])
    return v


def _object(pairs: List[Tuple[str, Any]]) -> _Obj:
    o = _Obj(pairs)
    o.pairs = pairs
    return o


def _decode_body(data: bytes) -> Any:
    text = data.decode("utf-8", _GO_REPLACE)
    v = json.loads(
        text,
        object_pairs_hook=_object,
        parse_float=_parse_number,
        parse_int=_parse_number,
        parse_constant=_reject_constant,
    )
    if _SURROGATE_ESCAPE.search(text):
        v = _fix_surrogates(v)
    return v


def _is_attributes_name(name: str) -> bool:
    # Go matches a member to the struct field "attributes" exactly or case-insensitively
    # (Unicode simple folding: "ſ" folds to "s").
    if len(name) != len("attributes"):
        return False
    for c, w in zip(name, "attributes"):
        if c != w and c != w.upper() and not (w == "s" and c == "\u017f"):
            return False
    return True


def _attributes(body: Any) -> Optional[Dict[str, Any]]:
    """The attributes object of body as Go reads it into map[string]json.RawMessage, or
    None where Go gets an error or a nil map."""
    if body is None or not isinstance(body, _Obj):
        return None
    attrs: Optional[Dict[str, Any]] = None
    bad = False
    for name, value in body.pairs:
        if not _is_attributes_name(name):
            continue
        if value is None:
            attrs = None  # null sets the map to nil
        elif isinstance(value, _Obj):
            if attrs is None:
                attrs = {}
            attrs.update(value)  # Go decodes into the map it has: repeats merge
        else:
            bad = True  # a type error: Go goes on decoding, then fails
    return None if bad else attrs


def _as_any(v: Any) -> Any:
    """v as json.Unmarshal into any compares it: a number Go cannot hold makes the whole
    value its JSON text (the number's own text when it is the whole value)."""
    if isinstance(v, _Overflow):
        return v.text
    return v


def _same(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of two values decoded into any."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _conflicting_names(attrs: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    for names in _REPLAY_NAMES:
        first: Optional[str] = None
        want: Any = None
        for name in names:
            if name not in attrs:
                continue
            v = _as_any(attrs[name])
            if first is None:
                first, want = name, v
                continue
            if not _same(v, want):
                return first, name
    return None


def _names_of(key: str) -> Tuple[str, ...]:
    for names in _REPLAY_NAMES:
        if names[0] == key:
            return names
    return (key,)


def _lookup(attrs: Dict[str, Any], names: Sequence[str]) -> Optional[Tuple[str, Any]]:
    for n in names:
        if n in attrs:
            return n, attrs[n]
    return None


def _string_attr(attrs: Dict[str, Any], names: Sequence[str]) -> Optional[str]:
    # The first name present, if its value is a string; null decodes into Go's string
    # as "" with no error.
    found = _lookup(attrs, names)
    if found is None:
        return None
    v = found[1]
    if v is None:
        return ""
    return v if isinstance(v, str) else None


def _entry_body(entry: Mapping[str, Any]) -> Union[bytes, str]:
    """The canonical body bytes of entry, or a reason text when it has none."""
    if "canonical_body" in entry:
        raw = entry["canonical_body"]
        if isinstance(raw, (bytes, bytearray, memoryview)):
            return bytes(raw)
        if isinstance(raw, str):
            return raw.encode("utf-8", "surrogatepass")
        return "canonical_body is neither bytes nor str"
    if "canonical_body_b64" in entry:
        raw = entry["canonical_body_b64"]
        if isinstance(raw, str):
            raw = raw.encode("ascii", "replace")
        if not isinstance(raw, (bytes, bytearray)):
            return "canonical_body_b64 is not a string"
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            return "canonical_body_b64 is not base64"
    return "chain entry has neither canonical_body nor canonical_body_b64"


def _entry_seq(entry: Mapping[str, Any]) -> int:
    seq = entry.get("seq", 0)
    if isinstance(seq, bool) or not isinstance(seq, int) or not _INT64_MIN <= seq <= _INT64_MAX:
        return 0
    return seq


def verify_replay(entry: Optional[Mapping[str, Any]], replayed_output: Union[str, bytes]) -> ReplayResult:
    """Compare replayed_output with the output recorded in entry and say why they match
    or not. It never raises: whatever entry holds, the answer is a ReplayResult, and a
    missing entry, an unreadable body or missing attributes are reasons in it.

    entry is a chain entry as a mapping: GET /api/chain/{seq}'s answer or an export's
    entry (seq and canonical_body_b64), or a row of the chain table (seq and
    canonical_body, bytes or str). replayed_output is a str (hashed as UTF-8) or bytes.

    The verdict is pkg/chain VerifyReplay's on the same body: each replay attribute is
    read under its documented name, Cairn's earlier name or the original product's
    (bijotel.replay.*); one attribute under two names with different values is
    conflicting_replay_context whatever the output. Like VerifyReplay, it reads the body
    as it is: verify the chain or the export the entry came from first.
    """
    r = ReplayResult()
    try:
        return _verify(r, entry, replayed_output)
    except Exception as e:  # never raise: an unforeseen input is a malformed entry
        r.original_hash = None
        return r._verdict(REASON_MALFORMED_ENTRY, f"chain entry could not be read: {type(e).__name__}")


def _verify(r: ReplayResult, entry: Any, replayed_output: Any) -> ReplayResult:
    if isinstance(replayed_output, str):
        r.replay_hash = _sha256_hex(replayed_output.encode("utf-8", "surrogatepass"))
    elif isinstance(replayed_output, (bytes, bytearray, memoryview)):
        r.replay_hash = _sha256_hex(bytes(replayed_output))
    else:
        if isinstance(entry, Mapping):
            r.seq = _entry_seq(entry)
        return r._verdict(
            REASON_MALFORMED_REPLAY,
            f"the replayed output is {type(replayed_output).__name__}, not str or bytes: nothing to compare",
        )
    if entry is None:
        return r._verdict(REASON_MALFORMED_ENTRY, _TEXT_NO_ENTRY)
    if not isinstance(entry, Mapping):
        return r._verdict(
            REASON_MALFORMED_ENTRY,
            f"chain entry is {type(entry).__name__}, not a mapping with seq and canonical_body_b64",
        )
    r.seq = _entry_seq(entry)
    data = _entry_body(entry)
    if isinstance(data, str):
        return r._verdict(REASON_MALFORMED_ENTRY, data)
    try:
        body = _decode_body(data)
    except (ValueError, RecursionError):
        return r._verdict(REASON_MALFORMED_ENTRY, _TEXT_BODY_NOT_SPAN)
    attrs = _attributes(body)
    if attrs is None:
        return r._verdict(REASON_MALFORMED_ENTRY, _TEXT_BODY_NOT_SPAN)
    r.model = _string_attr(attrs, ("gen_ai.request.model", "gen_ai.response.model"))
    conflict = _conflicting_names(attrs)
    if conflict is not None:
        a, b = conflict
        return r._verdict(
            REASON_CONFLICTING_REPLAY_CONTEXT,
            f"{a} and {b} hold different values: the entry records one replay attribute twice, so neither is used",
        )
    r.model_version = _string_attr(attrs, _names_of(ATTR_REPLAY_MODEL_VERSION))
    found = _lookup(attrs, _names_of(ATTR_REPLAY_OUTPUT_HASH))
    if found is None:
        return r._verdict(REASON_NO_REPLAY_CONTEXT, _TEXT_NO_REPLAY_CONTEXT)
    hash_key, original = found
    if original is None:
        original = ""  # null into a Go string: "", no error
    if not isinstance(original, str) or not _HEX64.match(original):
        return r._verdict(REASON_MALFORMED_ENTRY, f"{hash_key} is not a string of 64 lowercase hex characters")
    r.original_hash = original
    flag = _lookup(attrs, _names_of(ATTR_REPLAY_DETERMINISTIC))
    if flag is not None:
        if not isinstance(flag[1], bool):
            return r._verdict(REASON_MALFORMED_ENTRY, flag[0] + " is not a boolean")
        r.deterministic = flag[1]
    else:
        r.deterministic = _lookup(attrs, _names_of(ATTR_REPLAY_SEED)) is not None
    if original == r.replay_hash:
        r.match, r.reason_code, r.reason = True, REASON_MATCH, None
        return r
    if r.deterministic:
        return r._verdict(REASON_OUTPUT_MISMATCH, _output_mismatch_text(r.model_version))
    return r._verdict(REASON_NONDETERMINISTIC_MISMATCH, _TEXT_NONDETERMINISTIC_MISMATCH)
