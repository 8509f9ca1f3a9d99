"""Observation masking: old tool results replaced by a placeholder, recorded as context updates.

The placeholder replaces only the result's content, so every ``tool_use`` keeps its
``tool_result`` and the history stays API-valid. Each replacement is a stored update at the
request's timestamp (edit type :data:`MASKED_RESULT`), like a truncation notice: a rollback to an
earlier turn drops it, a resumed session reloads it from ``context_history.json``, and ``%agent
saw`` shows the placeholder because it shows what was sent.

Cache-aware: clearing changes the prompt from the first cleared block on, so the cache after it is
written again. Masking therefore acts only when it clears at least ``clear`` tokens at once, and
leaves the newest ``keep`` results whole (the model is still working with them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from ..api_facts.tokens import count_text_tokens
from ..contracts.context_policy import LayerOptions
from ..contracts.messages import Message
from .mask_index import ResultIndex
from .updates import ContextHistoryUpdates
from .window import RangeLike

MASKED_RESULT = 5
"""Edit type of a masked tool result (after Cline's 0-4)."""
PLACEHOLDER = "[Old tool result cleared to save context: {tool}, {tokens:,} tokens. Run the tool again if you need it.]"
"""What the model sees instead of a cleared result (names the tool and how much was there)."""


@dataclass(frozen=True)
class Candidate:
    """A tool result masking may clear."""

    message: int
    block: int
    tool: str
    tokens: int


@dataclass(frozen=True)
class Masked:
    """What one masking did: results cleared, the tokens it removed (estimated), and the history
    index of the first message it changed (the prompt before it is as the last request sent it)."""

    results: int
    tokens_removed: int
    first_message: int

    @property
    def detail(self) -> str:
        return f"cleared {self.results} old tool result(s)"


def placeholder(tool: str, tokens: int) -> str:
    """The text a masked result reads."""
    return PLACEHOLDER.format(tool=tool or "tool", tokens=tokens)


@lru_cache(maxsize=4096)
def _placeholder_tokens(tool: str, tokens: int) -> int:
    """Tokens of a placeholder (asked again for each pending result before every request)."""
    return count_text_tokens(placeholder(tool, tokens))


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is a masked result's placeholder."""
    return text.startswith("[Old tool result cleared to save context:")


def candidates(history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
               options: LayerOptions, index: ResultIndex | None = None) -> list[Candidate]:
    """Results older than the newest ``keep``, after the hidden range, not yet replaced by any
    update, not from an excluded tool, oldest first. (A replaced result counts towards ``keep``.)
    ``index`` is the session's :class:`ResultIndex` (a request then costs what changed since the
    last one); None walks the whole history."""
    index = index if index is not None else ResultIndex()
    return [Candidate(*found) for found in index.old_results(history, updates, deleted_range, options.exclude,
                                                              options.keep)]


def mask_old_results(history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
                     options: LayerOptions, ts: float, previous_total: int | None,
                     index: ResultIndex | None = None) -> Masked | None:
    """Replace old results by placeholders (stored at ``ts``) when that clears at least
    ``options.clear`` tokens and the previous request reached ``options.trigger``; None otherwise."""
    if options.trigger and (previous_total is None or previous_total < options.trigger):
        return None
    index = index if index is not None else ResultIndex()
    least = max(options.clear, 1)
    if index.old_tokens(history, updates, deleted_range, options.exclude, options.keep, least) < least:
        return None  # placeholders take tokens too: clearing everything would clear less than that
    found = candidates(history, updates, deleted_range, options, index)
    removed = sum(c.tokens - _placeholder_tokens(c.tool, c.tokens) for c in found)
    if removed < max(options.clear, 1):
        return None
    for c in found:
        updates.add(c.message, c.block, ts, placeholder(c.tool, c.tokens), edit_type=MASKED_RESULT)
    return Masked(len(found), removed, found[0].message)


def next_masking_start(history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
                       options: LayerOptions, index: ResultIndex | None = None) -> int | None:
    """The history index of the message where the next masking will start changing the prompt:
    the oldest result it may clear (:func:`candidates`' rule, whatever ``keep`` leaves whole for
    now). None when there is none.

    A cache breakpoint just before it outlives the maskings to come: when masking clears, the
    prompt changes only after it, so the request reads everything up to it from the cache and
    rewrites only the rest (with breakpoints on the last messages alone, the API's 20-block
    lookback cannot reach that far back, and a masking rewrote the whole prompt).
    """
    index = index if index is not None else ResultIndex()
    return index.next_start(history, updates, deleted_range, options.exclude)


def masked_blocks(updates: ContextHistoryUpdates) -> Mapping[int, tuple[int, ...]]:
    """Message index → its masked blocks (for views that mark them)."""
    out: dict[int, tuple[int, ...]] = {}
    for i in updates:
        hits = tuple(b for b, u in updates.latest_by_block(i).items() if is_placeholder(u.text))
        if hits:
            out[i] = hits
    return out


__all__ = ["Candidate", "MASKED_RESULT", "Masked", "PLACEHOLDER", "next_masking_start", "candidates", "is_placeholder",
           "mask_old_results", "masked_blocks", "placeholder"]
