"""Context-window arithmetic: how much may be sent, when to truncate, and which range to hide.

Everything here is pure and follows Cline's ContextManager (v3.89.2) to the digit; see
``shared/spec/context-manager.md``. Ranges are inclusive ``(start, end)`` pairs of history indices
hidden from the model; indices 0 and 1 (the task and its first answer) are never hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence, Union

from ..api_facts.cost import Usage
from ..contracts.messages import Message
from ..contracts.saved import Number, saved_record

Keep = Literal["none", "last_two", "half", "quarter"]
DeletedRange = tuple[int, int]
RangeLike = Union[Sequence[int], None]

DEFAULT_CONTEXT_WINDOW = 128_000
# Cline's hand-tuned margins for the three common window sizes; anything else uses the formula.
_MAX_ALLOWED_BY_WINDOW: dict[int, int] = {64_000: 37_000, 128_000: 98_000, 200_000: 160_000}


@dataclass(frozen=True, slots=True)
class ContextWindowInfo:
    """A model's window and the prompt size (in tokens) at which nbagent starts truncating.

    ``max_allowed_size`` is not rounded: a 131,072-token window allows 104,857.6 tokens.
    """

    context_window: int
    max_allowed_size: float


@saved_record
@dataclass(frozen=True, slots=True)
class RequestUsage:
    """Token usage of the previous API request, and when it was made.

    ``ts`` is the request's timestamp (any monotonic number, e.g. epoch milliseconds); stored
    context updates are recorded at this timestamp so that a rollback can undo them.
    """

    ts: Number
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total(self) -> int:
        """Every token of the request: input + output + cache writes + cache reads."""
        return (
            (self.input_tokens or 0)
            + (self.output_tokens or 0)
            + (self.cache_creation_input_tokens or 0)
            + (self.cache_read_input_tokens or 0)
        )

    def at(self, ts: float) -> "RequestUsage":
        """The same figures at another timestamp."""
        return RequestUsage(ts, self.input_tokens, self.output_tokens, self.cache_creation_input_tokens,
                            self.cache_read_input_tokens)

    @classmethod
    def from_usage(cls, ts: float, usage: Usage) -> "RequestUsage":
        """Build from the API's usage figures (:class:`nbagent.engine.api_facts.cost.Usage`)."""
        return cls(
            ts=ts,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
        )


@lru_cache(maxsize=64)  # a pure function of one number, asked several times a request
def get_context_window_info(context_window: int | None) -> ContextWindowInfo:
    """The window (missing or 0 means 128,000) and its ``max_allowed_size``.

    64,000 → 37,000; 128,000 → 98,000; 200,000 → 160,000; otherwise
    ``max(window - 40,000, window * 0.8)`` (1,000,000 → 960,000; 131,072 → 104,857.6).
    """
    window = context_window or DEFAULT_CONTEXT_WINDOW
    fixed = _MAX_ALLOWED_BY_WINDOW.get(window)
    max_allowed: float = fixed if fixed is not None else max(window - 40_000, window * 0.8)
    return ContextWindowInfo(context_window=window, max_allowed_size=max_allowed)


def should_compact_context_window(
    previous_total_tokens: int | None,
    context_window: int | None,
    threshold_percentage: float | None = None,
) -> bool:
    """Whether auto-condense should run before the next request.

    The threshold is ``min(floor(window * pct), max_allowed_size)`` when a non-zero percentage is
    given, else ``max_allowed_size``; compact when the previous request's total reaches it. With no
    previous request there is nothing to compact.
    """
    if previous_total_tokens is None:
        return False
    info = get_context_window_info(context_window)
    threshold = info.max_allowed_size
    if threshold_percentage:
        threshold = min(math.floor(info.context_window * threshold_percentage), info.max_allowed_size)
    return previous_total_tokens >= threshold


def normalize_range(deleted_range: RangeLike) -> DeletedRange | None:
    """``(start, end)`` as a tuple of ints, or None (accepts the lists that JSON gives back)."""
    if deleted_range is None or len(deleted_range) == 0:
        return None
    if len(deleted_range) != 2:
        raise ValueError(f"a deleted range has two ends, got {deleted_range!r}")
    return (int(deleted_range[0]), int(deleted_range[1]))


def start_of_rest(deleted_range: RangeLike) -> int:
    """First history index after the range (2 when nothing is hidden). May exceed the history."""
    rng = normalize_range(deleted_range)
    return rng[1] + 1 if rng is not None else 2


def sent_position(index: int, deleted_range: RangeLike) -> int:
    """Where history message ``index`` (the first two, or one after the hidden range) sits in the
    request sent: the range's messages are left out."""
    return index if index < 2 else index - max(start_of_rest(deleted_range), 2) + 2


def get_next_truncation_range(
    messages: Sequence[Message],
    deleted_range: RangeLike,
    keep: Keep,
) -> DeletedRange:
    """The next range to hide, exactly as Cline computes it.

    ``R`` messages follow the current range (negative for a stale range); ``none`` hides all of
    them, ``last_two`` all but two, ``half`` ``(R // 4) * 2`` and ``quarter`` ``(3 * R // 8) * 2``
    (floor division, no clamp). If the last hidden message is not an assistant message the end
    moves back by one, once. The start is always 2; ``(2, 1)`` hides nothing.
    """
    rest = start_of_rest(deleted_range)
    remaining = len(messages) - rest
    if keep == "none":
        remove = max(remaining, 0)
    elif keep == "last_two":
        remove = max(remaining - 2, 0)
    elif keep == "half":
        remove = (remaining // 4) * 2
    elif keep == "quarter":
        remove = (3 * remaining // 8) * 2
    else:
        raise ValueError(f"keep must be 'none', 'last_two', 'half' or 'quarter', not {keep!r}")
    end = rest + remove - 1
    # One step back, never a loop: the hidden part should end on an assistant message so that the
    # kept part resumes with a user message (Cline does exactly one decrement).
    if 0 <= end < len(messages) and messages[end].get("role") != "assistant":
        end -= 1
    return (2, end)
