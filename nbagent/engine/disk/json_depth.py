"""JSON nesting, bounded before anything recurses through it.

Files, notebooks and model output can nest ``[[[…`` past the interpreter's stack. Catching the
RecursionError afterwards is not enough: while ``json`` or a recursive walk runs near the stack's
limit, a garbage collection that happens then runs other objects' finalizers with no stack left,
and their errors are lost ("Failed to process unraisable exception"). So the depth is measured
first, without recursion, and anything deeper than the bound is refused before it is parsed or walked.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from ..contracts.config import MAX_JSON_DEPTH

MAX_FILE_DEPTH = 2 * MAX_JSON_DEPTH
"""Nesting accepted from a file, a notebook's metadata or the model's JSON: tool inputs are bounded
to :data:`~nbagent.engine.contracts.config.MAX_JSON_DEPTH` when they enter history, inside a few
levels of their own; anything deeper was not written by nbagent, and the bound keeps ``json``'s C
recursion and every walk far from the stack's limit."""

# A JSON string, unrolled so that long strings (base64 images) are skipped in one step each.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STRING_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET_B = re.compile(rb"[^\[\]{}]+")
_STEP = [0] * 256  # what each bracket adds to the depth
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


class NestedTooDeepError(ValueError):
    """A JSON text or value nests deeper than the bound its reader accepts."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether a parsed JSON-like ``value`` nests more than ``limit`` lists and dicts deep."""
    # Iterative: the point is not to recurse through whatever the value holds.
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth >= limit:
                return True
            stack.extend((c, depth + 1) for c in (item.values() if isinstance(item, dict) else item))
    return False


def text_depth_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` arrays and objects inside each other (brackets
    inside strings do not count)."""
    if isinstance(text, str):
        if text.count("[") + text.count("{") <= limit:  # most texts: no scan at all
            return False
        brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).encode("ascii")
    else:
        if text.count(b"[") + text.count(b"{") <= limit:
            return False
        brackets = _NOT_BRACKET_B.sub(b"", _STRING_B.sub(b"", text))
    # One pass in C-implemented steps, linear in the brackets (a received notebook may hold millions).
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def loads_within(text: str | bytes, limit: int = MAX_FILE_DEPTH) -> Any:
    """``json.loads(text)``, or :class:`NestedTooDeepError` (a ValueError, as any text that is not
    JSON) when the text nests deeper than ``limit``, found before parsing."""
    if text_depth_exceeds(text, limit):
        raise NestedTooDeepError(limit)
    return json.loads(text)


__all__ = ["MAX_FILE_DEPTH", "NestedTooDeepError", "depth_exceeds", "loads_within", "text_depth_exceeds"]
