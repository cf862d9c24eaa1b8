"""Reading a sealed body as Go's encoding/json reads it into VerifyReplay's types.

VerifyReplay decodes the canonical body into struct{Attributes map[string]json.RawMessage}
and each replay attribute from its raw JSON; this module gives the same values and the
same failures in Python (invalid UTF-8 and lone surrogates as U+FFFD, repeated members
merged or overridden, a case-insensitive "attributes", numbers as float64,
reflect.DeepEqual for comparisons).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, Dict, List, Optional, Tuple

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

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


def decode_body(data: bytes) -> Any:
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


def attributes_of(body: Any) -> Optional[Dict[str, Any]]:
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


def as_any(v: Any) -> Any:
    """v as json.Unmarshal into any compares it: a number Go cannot hold makes the whole
    value its JSON text (the number's own text when it is the whole value)."""
    if isinstance(v, _Overflow):
        return v.text
    return v


def same(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of two values decoded into any."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)

