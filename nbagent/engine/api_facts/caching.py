"""Prompt caching as the Messages API does it, on an injectable clock.

The prompt is a sequence of blocks in the API's cache order: tools, then system blocks, then the
content blocks of each message. A block with ``cache_control`` is a *breakpoint*; the prefix that
ends there is written to the cache (when it is at least :data:`MIN_CACHEABLE_TOKENS` long), and a
later request whose prefix up to some block is identical reads it, as long as the entry is within
its TTL. Like the API, a read is found at a breakpoint or up to :data:`LOOKBACK_BLOCKS` blocks
before one, and a read refreshes the entry's TTL.

Usage accounting: ``cache_read`` is the longest prefix found, ``cache_creation`` the tokens from
there to the last breakpoint (split into 1-hour and 5-minute writes), and ``input_tokens`` the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nbagent.engine.api_facts.tokens import TokenCounter

from ..contracts.messages import content_blocks

MIN_CACHEABLE_TOKENS = 1024
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class CacheUsage:
    """The cache part of one request's usage."""

    read: int = 0
    write_5m: int = 0
    write_1h: int = 0

    @property
    def write(self) -> int:
        """All cache-creation tokens."""
        return self.write_5m + self.write_1h


@dataclass(frozen=True)
class _Prompt:
    """A request's blocks in cache order: each block's breakpoint TTL (None if it is not a
    breakpoint) and, for the blocks a cache lookup or write can use (breakpoints and the
    ``LOOKBACK_BLOCKS`` before each), the digest of the prefix ending there and how to rebuild that
    prefix for counting (tools, system blocks, messages, blocks of the partial message)."""

    ttls: list[float | None]
    digests: dict[int, str]
    cuts: dict[int, tuple[int, int, int, int]]

    @property
    def breakpoints(self) -> list[int]:
        return [i for i, ttl in enumerate(self.ttls) if ttl is not None]


def _ttl(block: object) -> float | None:
    match block:
        case {"cache_control": {"type": "ephemeral"} as cc} if isinstance(block, dict) and isinstance(cc, dict):
            return TTL_SECONDS.get(str(cc.get("ttl", "5m")), TTL_SECONDS["5m"])
    return None


def _canonical(block: object) -> bytes:
    # cache_control marks where to cache; it is not part of what is cached.
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), default=str).encode()


def _mappings(value: object) -> list[Mapping[str, object]]:
    """The mappings of a received list (the messages, the tools): anything else the API would refuse."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, (list, tuple)) else []


def _system_blocks(body: Mapping[str, object]) -> list[Mapping[str, object]]:
    system = body.get("system")
    if not system:
        return []
    return [{"type": "text", "text": system}] if isinstance(system, str) else _mappings(system)


class _Serialised:
    """The previous prompt's blocks (in cache order) and their canonical bytes, and the prompt of
    the last body seen. A conversation is resent whole with every request: a block equal to the one
    at the same place last time (a dict compare, at C speed) is not serialised again, and the
    validation's breakpoint count and the cache accounting share one computation per request."""

    blocks: tuple[list[object], list[bytes]] = ([], [])
    last: tuple[object, _Prompt] | None = None


def _canonicals(blocks: list[object]) -> list[bytes]:
    before, before_bytes = _Serialised.blocks  # one read: another caller may replace the pair
    out = []
    for i, block in enumerate(blocks):
        if i < len(before) and (before[i] is block or before[i] == block):
            out.append(before_bytes[i])
        else:
            out.append(_canonical(block))
    _Serialised.blocks = (blocks, out)
    return out


def positions(body: Mapping[str, object]) -> _Prompt:
    """The prompt's blocks in cache order, with the prefix digests a lookup or write can use."""
    last = _Serialised.last
    if last is not None and last[0] is body:
        return last[1]
    tools = _mappings(body.get("tools"))
    system = _system_blocks(body)
    messages = _mappings(body.get("messages"))
    contents = [content_blocks(m) for m in messages]
    ordered: list[object] = [*tools, *system, *(b for blocks in contents for b in blocks)]
    ttls = [_ttl(b) for b in ordered]
    auto_ttl = _ttl(body)  # top-level cache_control: a breakpoint on the last block
    if auto_ttl is not None and ttls and ttls[-1] is None:
        ttls[-1] = auto_ttl
    needed = {i for bp, ttl in enumerate(ttls) if ttl is not None
              for i in range(max(0, bp - LOOKBACK_BLOCKS + 1), bp + 1)}
    canonical = _canonicals(ordered)
    h = hashlib.blake2b(str(body.get("model", "")).encode(), digest_size=16)
    prompt = _Prompt(ttls, {}, {})

    def block_end(i: int, kind: bytes, cut: tuple[int, int, int, int]) -> None:
        h.update(kind + canonical[i])
        if i in needed:  # a digest only where the cache can be looked up or written
            prompt.digests[i], prompt.cuts[i] = h.hexdigest(), cut

    i = 0
    for t in range(len(tools)):
        block_end(i, b"\x00tool\x00", (t + 1, 0, 0, 0))
        i += 1
    for j in range(len(system)):
        block_end(i, b"\x00system\x00", (len(tools), j + 1, 0, 0))
        i += 1
    for m, (message, blocks) in enumerate(zip(messages, contents, strict=True)):
        # The role is part of the prefix: the same blocks under another role are another prompt.
        h.update(b"\x00message\x00" + str(message.get("role")).encode())
        for b in range(len(blocks)):
            block_end(i, b"\x00block\x00", (len(tools), len(system), m, b + 1))
            i += 1
    _Serialised.last = (body, prompt)
    return prompt


def count_breakpoints(body: Mapping[str, object]) -> int:
    """How many explicit ``cache_control`` breakpoints the request carries (the API allows 4)."""
    return len(positions(body).breakpoints)


MAX_ANCHORS = 2
"""One-hour cache anchors a request carries at most: with the system prompt's breakpoint and the
one on the last message that makes the API's four."""


def anchorable(index: int, messages: int) -> bool:
    """Whether message ``index`` of a request of ``messages`` messages can take a cache anchor:
    older than the breakpoints nbagent's provider keeps on the last and the third-last message,
    which already cover the newer ones."""
    return 0 <= index < messages - 3


def ttl_order_error(body: Mapping[str, object]) -> str | None:
    """The API's rule for mixed TTLs: a one-hour breakpoint may not follow a five-minute one in
    cache order (tools, system, messages). The error's text, or None when the order holds."""
    ttls = positions(body).ttls
    short = next((i for i, ttl in enumerate(ttls) if ttl == TTL_SECONDS["5m"]), None)
    if short is not None and any(ttl == TTL_SECONDS["1h"] for ttl in ttls[short + 1:]):
        return ("cache_control: a breakpoint with ttl '1h' must come before every breakpoint with ttl '5m' "
                "(tools, then system, then messages)")
    return None


def prefix_tokens(body: Mapping[str, object], cut: tuple[int, int, int, int], counter: TokenCounter) -> int:
    """Tokens of the prompt prefix described by ``cut``, counted like the whole request is."""
    n_tools, n_system, n_messages, n_blocks = cut
    messages = _mappings(body.get("messages"))
    prefix = messages[:n_messages]
    if n_blocks:
        partial = messages[n_messages]
        prefix.append({"role": partial.get("role"), "content": content_blocks(partial)[:n_blocks]})
    tools = _mappings(body.get("tools"))[:n_tools]
    system = _system_blocks(body)[:n_system]
    return counter.count_request(prefix, system or None, tools or None)


class PromptCache:
    """Prefix cache entries (digest → expiry, TTL) with the API's read/write accounting."""

    def __init__(self, clock: Callable[[], float], counter: TokenCounter,
                 min_tokens: int = MIN_CACHEABLE_TOKENS) -> None:
        self._clock = clock
        self._counter = counter
        self._min_tokens = min_tokens
        self._entries: dict[str, tuple[float, float]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def account(self, body: Mapping[str, object], total_tokens: int) -> CacheUsage:
        """Look the request's prefixes up, store its breakpoints, and return the cache usage."""
        prompt = positions(body)
        breakpoints = prompt.breakpoints
        if not breakpoints:
            return CacheUsage()
        now = self._clock()
        self._entries = {k: v for k, v in self._entries.items() if v[0] > now}

        def tokens(i: int) -> int:
            return min(prefix_tokens(body, prompt.cuts[i], self._counter), total_tokens)

        last = breakpoints[-1]
        if tokens(last) < self._min_tokens:
            return CacheUsage()  # too short to cache anywhere: everything is plain input

        read_at = self._longest_hit(prompt)
        read = tokens(read_at) if read_at is not None else 0
        if read_at is not None:
            ttl = self._entries[prompt.digests[read_at]][1]
            self._entries[prompt.digests[read_at]] = (now + ttl, ttl)
        start = read_at if read_at is not None else -1
        # Writes with a 1-hour TTL run up to the last 1-hour breakpoint after the read; the rest of
        # the written span, up to the last breakpoint, is 5-minute.
        one_hour_end = max((i for i in breakpoints if i > start and prompt.ttls[i] == TTL_SECONDS["1h"]), default=None)
        written = tokens(last) - read if last > start else 0
        write_1h = (tokens(one_hour_end) - read) if one_hour_end is not None else 0
        for i in breakpoints:
            if i > start and tokens(i) >= self._min_tokens:
                ttl = prompt.ttls[i] or TTL_SECONDS["5m"]
                self._entries[prompt.digests[i]] = (now + ttl, ttl)
        return CacheUsage(read=read, write_5m=max(written - write_1h, 0), write_1h=max(write_1h, 0))

    def peek_read(self, body: Mapping[str, object], total_tokens: int) -> int:
        """The tokens :meth:`account` would read from the cache for ``body``, changing nothing
        (what a rate limit check needs: cache reads do not count towards input token limits)."""
        prompt = positions(body)
        if not prompt.breakpoints:
            return 0
        now = self._clock()
        for i in sorted(prompt.digests, reverse=True):
            entry = self._entries.get(prompt.digests[i])
            if entry is not None and entry[0] > now:
                return min(prefix_tokens(body, prompt.cuts[i], self._counter), total_tokens)
        return 0

    def _longest_hit(self, prompt: _Prompt) -> int | None:
        for i in sorted(prompt.digests, reverse=True):  # the blocks a lookup can use
            if prompt.digests[i] in self._entries:
                return i
        return None
