"""Prompt-cache accounting for the explorer's replays, fast enough for 200 requests × 5 strategies.

The reference is the simulated Messages API's :class:`~nbagent.engine.api_facts.caching.PromptCache`
(``simulate(..., cache_model="prompt_cache")`` runs it directly). It re-hashes every block of the
prompt on every request, which is O(history) of JSON encoding per request: about a second per
200-request strategy. :class:`PrefixCache` gives the same figures for the requests the explorer
sends (the tool definitions first, as a token count; a breakpoint on the system prompt, if any,
and on the last block of the last message, 5-minute; and the mask layer's one-hour anchors, with
the system prompt's breakpoint one-hour then, as nbagent's provider places them) while hashing each message object
only once: a block's digest is cached by message identity, and the running prefix digest is
chained from those. ``tests/explorer/test_explorer.py``
checks that both agree request by request.

The rules are PromptCache's: a prefix is written at a breakpoint when it has at least
``min_tokens``; nothing is cached when the whole prompt is shorter; a read is the longest cached
prefix that ends at a breakpoint or up to ``LOOKBACK_BLOCKS`` blocks before one, and refreshes its
TTL; writes are the tokens from the read up to the last breakpoint, one-hour up to the last
one-hour breakpoint after the read and five-minute after it (the API's rule for mixed TTLs).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine.api_facts.caching import (
    LOOKBACK_BLOCKS,
    MIN_CACHEABLE_TOKENS,
    TTL_SECONDS,
    CacheUsage,
)
from ..engine.api_facts.tokens import TokenCounter, count_text_tokens
from ..engine.contracts.messages import content_blocks

if TYPE_CHECKING:
    from ..engine.contracts.messages import Message


@dataclass(frozen=True)
class RequestTokens:
    """Estimated prompt tokens of one request and its cache usage."""

    tokens: int
    cache: CacheUsage


class _Layout:
    """Block positions of one request: prefix digest and prefix tokens at every block end
    (-1 for a block inside a message, counted only if needed), and per message the chained digest
    and running tokens after it, so the next request can resume from any shared message."""

    __slots__ = ("system", "base", "digests", "ends", "partial", "messages", "chain", "running", "positions")

    def __init__(self, system: str | None) -> None:
        self.system = system
        self.base = 0
        self.digests: list[bytes] = []
        self.ends: list[int] = []
        self.partial: dict[int, tuple[int, int]] = {}  # position → (message index, blocks in prefix)
        self.messages: list[Message] = []
        self.chain: list[bytes] = [b"prefix"]  # digest before message 0, after each message
        self.running: list[int] = [0]  # prefix tokens before message 0, after each message
        self.positions: list[int] = [0]  # block positions before message 0, after each message

    def cut(self, keep: int) -> "_Layout":
        """A copy holding only the first ``keep`` messages (and the system prompt)."""
        out = _Layout(self.system)
        out.base = self.base
        end = self.positions[keep]
        out.digests, out.ends = self.digests[:end], self.ends[:end]
        out.partial = {p: v for p, v in self.partial.items() if p < end}
        out.messages = self.messages[:keep]
        out.chain, out.running = self.chain[: keep + 1], self.running[: keep + 1]
        out.positions = self.positions[: keep + 1]
        return out


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _canonical(block: object) -> bytes:
    # cache_control marks where to cache; it is not part of what is cached (as in PromptCache).
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), default=str).encode()


class PrefixCache:
    """Cache entries (prefix digest → expiry and TTL) with PromptCache's read/write accounting."""

    def __init__(self, counter: TokenCounter, min_tokens: int = MIN_CACHEABLE_TOKENS,
                 ttl: float = TTL_SECONDS["5m"], lookback: int = LOOKBACK_BLOCKS) -> None:
        self._counter = counter
        self._min = min_tokens
        self._ttl = ttl
        self._lookback = lookback
        self._entries: dict[bytes, tuple[float, float]] = {}  # digest → (expiry, TTL)
        # id(message) → (message, role marker, block digests, tokens); holding the message keeps
        # its id from being reused while cached.
        self._meta: dict[int, tuple[Message, bytes, list[bytes], int]] = {}
        self._system: tuple[str, int] | None = None
        self._last: _Layout | None = None

    def _message(self, message: Message) -> tuple[bytes, list[bytes], int]:
        hit = self._meta.get(id(message))
        if hit is None or hit[0] is not message:
            role = str(message.get("role")).encode()
            hit = (message, role, [_digest(_canonical(b)) for b in content_blocks(message)],
                   self._counter.count_message(message))
            self._meta[id(message)] = hit
        return hit[1], hit[2], hit[3]

    def _system_tokens(self, system: str) -> int:
        if self._system is None or self._system[0] != system:
            self._system = (system, count_text_tokens(system))
        return self._system[1]

    def _layout(self, messages: Sequence[Message], system: str | None) -> _Layout:
        """The prompt's block positions, reusing the previous request's for the messages that are
        the same objects (a replay mostly appends, so this is O(new messages))."""
        prev = self._last
        keep = 0
        if prev is not None and prev.system == system:
            limit = min(len(messages), len(prev.messages))
            while keep < limit and messages[keep] is prev.messages[keep]:
                keep += 1
        if prev is None or prev.system != system:
            lay = _Layout(system)
            if system:
                lay.base = self._system_tokens(system)
                lay.digests.append(_digest(lay.chain[0] + b"\x00system\x00" + _canonical({"type": "text", "text": system})))
                lay.ends.append(lay.base)
                lay.chain[0] = lay.digests[0]
            lay.running[0] = lay.base
            lay.positions[0] = len(lay.digests)
        else:
            lay = prev.cut(keep)
        for message in messages[keep:]:
            role, block_digests, tokens = self._message(message)
            m = len(lay.messages)
            d = _digest(lay.chain[-1] + b"\x00message\x00" + role)
            running = lay.running[-1]
            for b, bd in enumerate(block_digests):
                d = _digest(d + bd)
                lay.digests.append(d)
                last_block = b == len(block_digests) - 1
                lay.ends.append(running + tokens if last_block else -1)
                if not last_block:
                    lay.partial[len(lay.digests) - 1] = (m, b + 1)
            lay.messages.append(message)
            lay.chain.append(d)
            lay.running.append(running + tokens)
            lay.positions.append(len(lay.digests))
        self._last = lay
        return lay

    def account(self, messages: Sequence[Message], system: str | None, now: float,
                extra_tokens: int = 0, breakpoint_on_last: bool = True, anchors: Sequence[int] = ()) -> RequestTokens:
        """Count the request, look its prefixes up, store its breakpoints, return both.

        ``extra_tokens`` (tool definitions) come first in the API's cache order, so they are part of
        every prefix: leaving them out made short sessions fall under the cacheable minimum (0%
        cache reads where the API read 90%). They are the same for a whole replay, so they need no
        digest of their own. ``anchors`` are the mask layer's one-hour breakpoints (message
        indices, :attr:`~nbagent.engine.contracts.provider.ModelRequest.cache_anchors`); with them
        the system prompt's breakpoint is one-hour too, as nbagent's provider sends them.
        """
        lay = self._layout(messages, system)
        digests = lay.digests
        anchors = [a for a in anchors if 0 <= a < len(messages) and markable(messages[a])]
        one_hour, five_min = TTL_SECONDS["1h"], self._ttl
        breakpoints = [(0, one_hour if anchors else five_min)] if system else []
        breakpoints += [(lay.positions[a + 1] - 1, one_hour) for a in anchors]
        total = lay.running[-1] + extra_tokens
        if breakpoint_on_last and messages and digests and markable(messages[-1]):
            breakpoints.append((len(digests) - 1, five_min))
        if not breakpoints:
            return RequestTokens(total, CacheUsage())
        return RequestTokens(total, self._usage(lay, messages, breakpoints, now, extra_tokens, total))

    def _usage(self, lay: _Layout, messages: Sequence[Message], breakpoints: list[tuple[int, float]],
               now: float, extra_tokens: int, total: int) -> CacheUsage:
        """PromptCache's accounting: the longest cached prefix is read (its TTL refreshed), the
        tokens up to the last one-hour breakpoint after it are one-hour writes, the rest up to the
        last breakpoint five-minute writes, and every breakpoint after the read is stored."""
        digests, partial = lay.digests, lay.partial
        ends = list(lay.ends)  # filled lazily for mid-message positions, per request
        self._entries = {k: v for k, v in self._entries.items() if v[0] > now}

        def tokens_at(i: int) -> int:
            if ends[i] < 0:  # a mid-message prefix: count it as PromptCache does
                m, n = partial[i]
                head = lay.running[m]  # system + whole messages before it
                part = {"role": messages[m].get("role"), "content": content_blocks(messages[m])[:n]}
                ends[i] = head + self._counter.count_message(part)
            return min(ends[i] + extra_tokens, total)

        last = breakpoints[-1][0]
        if tokens_at(last) < self._min:
            return CacheUsage()
        candidates = {p for bp, _ in breakpoints for p in range(max(0, bp - self._lookback + 1), bp + 1)}
        read_at = next((i for i in sorted(candidates, reverse=True) if digests[i] in self._entries), None)
        read = tokens_at(read_at) if read_at is not None else 0
        if read_at is not None:
            ttl = self._entries[digests[read_at]][1]
            self._entries[digests[read_at]] = (now + ttl, ttl)
        start = read_at if read_at is not None else -1
        written = tokens_at(last) - read if last > start else 0
        hour_end = max((i for i, ttl in breakpoints if i > start and ttl == TTL_SECONDS["1h"]), default=None)
        write_1h = tokens_at(hour_end) - read if hour_end is not None else 0
        for i, ttl in breakpoints:
            if i > start and tokens_at(i) >= self._min:
                self._entries[digests[i]] = (now + ttl, ttl)
        return CacheUsage(read=read, write_5m=max(written - write_1h, 0), write_1h=max(write_1h, 0))


def markable(message: Mapping[str, object]) -> bool:
    """Whether nbagent's Anthropic provider puts a breakpoint on the message's last block: not on
    an empty string, an empty list, or a thinking block."""
    content = message.get("content", "")
    if isinstance(content, str):
        return bool(content)
    if not isinstance(content, Sequence) or not content:
        return False
    match content[-1]:
        case {"type": "thinking" | "redacted_thinking"}:
            return False
        case _:
            return True
