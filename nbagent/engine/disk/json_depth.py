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

# A JSON string once its escaped backslashes and quotes are taken out (:func:`_unquoted`): no escape
# left to follow, so an unterminated one is scanned once. The regex that followed escapes itself
# rescanned the rest of the text from every escaped quote of an unterminated string: 80 kB of ``\"``
# took 42 s (every JSON read measures its depth this way first).
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STRING_B = re.compile(rb'"[^"]*"')
_NOT_BRACKET_B = re.compile(rb"[^\[\]{}]+")
_STEP = [0] * 256  # what each bracket adds to the depth
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


class NestedTooDeepError(ValueError):
    """A JSON text or value nests deeper than the bound its reader accepts."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


class TooManyValuesError(ValueError):
    """A JSON text holds more arrays and objects than its reader accepts: told before it is parsed."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit:,} JSON arrays and objects")
        self.limit = limit


def containers_exceed(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` arrays and objects (brackets inside strings do
    not count). Each parsed one costs ~100 bytes and a share of the garbage collector's passes: ``[],``
    repeated (a few hundred kB zipped) parses to GBs in tens of seconds. Counted at C speed; strings
    are only skipped where the plain count is over the bound."""
    return _opens(text) > limit and _opens(_unquoted(text)) > limit


def _opens(text: str | bytes) -> int:
    """The ``[`` and ``{`` in ``text``, strings included."""
    return text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")


def _unquoted(text: str | bytes) -> str | bytes:
    """``text`` without its JSON strings (a base64 image or an HTML table is skipped in one step).
    Escapes first, left to right: ``\\\\`` (a backslash) then ``\\"`` (a quote that ends no string);
    outside strings a backslash is no JSON, so the parser stops there and what it read agrees."""
    # Each step only where it has something to do: a bomb of ``[],`` has no backslash and no quote.
    if isinstance(text, str):
        bare = text.replace("\\\\", "").replace('\\"', "") if "\\" in text else text
        return _STRING.sub("", bare) if '"' in bare else bare
    bare_b = text.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in text else text
    return _STRING_B.sub(b"", bare_b) if b'"' in bare_b else bare_b


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


def text_depth_exceeds(text: str | bytes, limit: int, *, unquoted: bool = False) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` arrays and objects inside each other (brackets
    inside strings do not count; ``unquoted``: the text's strings are already taken out)."""
    if _opens(text) <= limit:  # most texts: no scan at all
        return False
    bare = text if unquoted else _unquoted(text)
    brackets = _NOT_BRACKET.sub("", bare).encode("ascii") if isinstance(bare, str) else _NOT_BRACKET_B.sub(b"", bare)
    # One pass in C-implemented steps, linear in the brackets (a received notebook may hold millions).
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def check_within(text: str | bytes, limit: int = MAX_FILE_DEPTH, *, containers: int | None = None) -> None:
    """What :func:`loads_within` checks before parsing, for a caller that parses the text itself
    (``text`` as the parser will read it: bytes only when they are UTF-8 and decoded so)."""
    bare = None
    if containers is not None and _opens(text) > containers:
        bare = _unquoted(text)  # taken out once, for both counts: the slowest step on a large text
        if _opens(bare) > containers:
            raise TooManyValuesError(containers)
    if text_depth_exceeds(bare if bare is not None else text, limit, unquoted=bare is not None):
        raise NestedTooDeepError(limit)


def loads_within(text: str | bytes, limit: int = MAX_FILE_DEPTH, *, containers: int | None = None) -> Any:
    """``json.loads(text)``, or :class:`NestedTooDeepError` (a ValueError, as any text that is not
    JSON) when the text nests deeper than ``limit``, or :class:`TooManyValuesError` when it holds more
    than ``containers`` arrays and objects (None: no such bound), found before parsing."""
    if isinstance(text, bytes):
        # Decoded as json.loads would (it detects UTF-16/32): counted in UTF-16 bytes, a character
        # such as U+4E22 (bytes 22 4E) holds a lone quote byte, so the strings skipped were not the
        # parser's and ``[`` nested 100,000 deep passed the check (a RecursionError, no ValueError).
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    check_within(text, limit, containers=containers)
    return json.loads(text)


__all__ = ["MAX_FILE_DEPTH", "NestedTooDeepError", "TooManyValuesError", "check_within", "containers_exceed",
           "depth_exceeds", "loads_within", "text_depth_exceeds"]
