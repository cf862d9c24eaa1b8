"""Replay helpers for Cairn chains: the Python side of pkg/chain's replay helpers.

Standard library only, Python 3.9 or later. Copy this directory (the cairn_replay
package) into an application, or put its parent (python/) on PYTHONPATH.

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
import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ._gojson import as_any, attributes_of, decode_body, same
from ._names import *  # noqa: F403 (every attribute name and reason code)
from ._names import (
    _REPLAY_NAMES,
    ATTR_BIJOTEL_REPLAY_OUTPUT_HASH,
    ATTR_REPLAY_DETERMINISTIC,
    ATTR_REPLAY_MODEL_VERSION,
    ATTR_REPLAY_OUTPUT_HASH,
    ATTR_REPLAY_SEED,
    REASON_CONFLICTING_REPLAY_CONTEXT,
    REASON_MALFORMED_ENTRY,
    REASON_MALFORMED_REPLAY,
    REASON_MATCH,
    REASON_NO_REPLAY_CONTEXT,
    REASON_NONDETERMINISTIC_MISMATCH,
    REASON_OUTPUT_MISMATCH,
)
from ._record import INT64_MAX, INT64_MIN, record_replay_context, sha256_hex

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

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


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


def _conflicting_names(attrs: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    for names in _REPLAY_NAMES:
        first: Optional[str] = None
        want: Any = None
        for name in names:
            if name not in attrs:
                continue
            v = as_any(attrs[name])
            if first is None:
                first, want = name, v
                continue
            if not same(v, want):
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
    if isinstance(seq, bool) or not isinstance(seq, int) or not INT64_MIN <= seq <= INT64_MAX:
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

    The body is read as Go's encoding/json reads it (invalid UTF-8 and lone surrogates as
    U+FFFD, repeated members, a case-insensitive "attributes"), with two differences no
    sealed body shows: a body nested deeper than Python's recursion limit allows (about
    1,000 levels; a sealed body holds at most 513) is malformed_entry, and an array or
    object holding a number beyond float64's range is compared by value where Go
    compares its JSON text.
    """
    r = ReplayResult()
    try:
        return _verify(r, entry, replayed_output)
    except Exception as e:  # never raise: an unforeseen input is a malformed entry
        r.original_hash = None
        return r._verdict(REASON_MALFORMED_ENTRY, f"chain entry could not be read: {type(e).__name__}")


def _verify(r: ReplayResult, entry: Any, replayed_output: Any) -> ReplayResult:
    if isinstance(replayed_output, str):
        r.replay_hash = sha256_hex(replayed_output.encode("utf-8", "surrogatepass"))
    elif isinstance(replayed_output, (bytes, bytearray, memoryview)):
        r.replay_hash = sha256_hex(bytes(replayed_output))
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
        body = decode_body(data)
    except (ValueError, RecursionError):
        return r._verdict(REASON_MALFORMED_ENTRY, _TEXT_BODY_NOT_SPAN)
    attrs = attributes_of(body)
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

