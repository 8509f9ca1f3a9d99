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
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from nbagent.engine.tokens import TokenCounter

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
class _Position:
    """The end of one block: the prefix digest up to it, its breakpoint TTL (None if it is not a
    breakpoint), and how to rebuild the prefix for counting (tools, system blocks, messages, blocks
    of the partial message)."""

    digest: str
    ttl: float | None
    cut: tuple[int, int, int, int]


def _ttl(block: Any) -> float | None:
    if not isinstance(block, Mapping):
        return None
    cc = block.get("cache_control")
    if not isinstance(cc, Mapping) or cc.get("type") != "ephemeral":
        return None
    return TTL_SECONDS.get(str(cc.get("ttl", "5m")), TTL_SECONDS["5m"])


def _canonical(block: Any) -> bytes:
    # cache_control marks where to cache; it is not part of what is cached.
    if isinstance(block, Mapping):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), default=str).encode()


def _content_blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content", "")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _system_blocks(body: Mapping[str, Any]) -> list[Any]:
    system = body.get("system")
    if not system:
        return []
    return [{"type": "text", "text": system}] if isinstance(system, str) else list(system)


def positions(body: Mapping[str, Any]) -> list[_Position]:
    """Every block end of the prompt in cache order, with a running digest of the prefix."""
    h = hashlib.blake2b(str(body.get("model", "")).encode(), digest_size=16)
    out: list[_Position] = []
    tools = list(body.get("tools") or [])
    system = _system_blocks(body)
    messages = list(body.get("messages") or [])
    auto_ttl = _ttl(body)  # top-level cache_control: a breakpoint on the last block
    for i, tool in enumerate(tools):
        h.update(b"\x00tool\x00" + _canonical(tool))
        out.append(_Position(h.hexdigest(), _ttl(tool), (i + 1, 0, 0, 0)))
    for j, block in enumerate(system):
        h.update(b"\x00system\x00" + _canonical(block))
        out.append(_Position(h.hexdigest(), _ttl(block), (len(tools), j + 1, 0, 0)))
    for m, message in enumerate(messages):
        # The role is part of the prefix: the same blocks under another role are another prompt.
        h.update(b"\x00message\x00" + str(message.get("role")).encode())
        for b, block in enumerate(_content_blocks(message)):
            h.update(b"\x00block\x00" + _canonical(block))
            out.append(_Position(h.hexdigest(), _ttl(block), (len(tools), len(system), m, b + 1)))
    if auto_ttl is not None and out and out[-1].ttl is None:
        last = out[-1]
        out[-1] = _Position(last.digest, auto_ttl, last.cut)
    return out


def count_breakpoints(body: Mapping[str, Any]) -> int:
    """How many explicit ``cache_control`` breakpoints the request carries (the API allows 4)."""
    return sum(1 for p in positions(body) if p.ttl is not None)


def prefix_tokens(body: Mapping[str, Any], cut: tuple[int, int, int, int], counter: TokenCounter) -> int:
    """Tokens of the prompt prefix described by ``cut``, counted like the whole request is."""
    n_tools, n_system, n_messages, n_blocks = cut
    messages = list(body.get("messages") or [])
    prefix = messages[:n_messages]
    if n_blocks:
        partial = messages[n_messages]
        prefix.append({"role": partial.get("role"), "content": _content_blocks(partial)[:n_blocks]})
    tools = list(body.get("tools") or [])[:n_tools]
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

    def account(self, body: Mapping[str, Any], total_tokens: int) -> CacheUsage:
        """Look the request's prefixes up, store its breakpoints, and return the cache usage."""
        pos = positions(body)
        breakpoints = [i for i, p in enumerate(pos) if p.ttl is not None]
        if not breakpoints:
            return CacheUsage()
        now = self._clock()
        self._entries = {k: v for k, v in self._entries.items() if v[0] > now}

        def tokens(i: int) -> int:
            return min(prefix_tokens(body, pos[i].cut, self._counter), total_tokens)

        last = breakpoints[-1]
        if tokens(last) < self._min_tokens:
            return CacheUsage()  # too short to cache anywhere: everything is plain input

        read_at = self._longest_hit(pos, breakpoints)
        read = tokens(read_at) if read_at is not None else 0
        if read_at is not None:
            ttl = self._entries[pos[read_at].digest][1]
            self._entries[pos[read_at].digest] = (now + ttl, ttl)
        start = read_at if read_at is not None else -1
        # Writes with a 1-hour TTL run up to the last 1-hour breakpoint after the read; the rest of
        # the written span, up to the last breakpoint, is 5-minute.
        one_hour_end = max((i for i in breakpoints if i > start and pos[i].ttl == TTL_SECONDS["1h"]), default=None)
        written = tokens(last) - read if last > start else 0
        write_1h = (tokens(one_hour_end) - read) if one_hour_end is not None else 0
        for i in breakpoints:
            if i > start and tokens(i) >= self._min_tokens:
                ttl = pos[i].ttl or TTL_SECONDS["5m"]
                self._entries[pos[i].digest] = (now + ttl, ttl)
        return CacheUsage(read=read, write_5m=max(written - write_1h, 0), write_1h=max(write_1h, 0))

    def _longest_hit(self, pos: Sequence[_Position], breakpoints: Sequence[int]) -> int | None:
        candidates = {p for bp in breakpoints for p in range(max(0, bp - LOOKBACK_BLOCKS + 1), bp + 1)}
        for i in sorted(candidates, reverse=True):
            if pos[i].digest in self._entries:
                return i
        return None
