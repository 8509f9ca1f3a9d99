"""What one API request works with and its retry state: the records :mod:`.request`'s steps share.

Kept below :mod:`.request`, :mod:`.rate_wait` and :mod:`.request_context` so that each of them takes
these records without importing another (no import circle between the request's modules).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Sequence

from ..api_facts.cost import Usage
from ..api_facts.tokens import TokenCounter
from ..context.window import DeletedRange, RangeLike, normalize_range, sent_position
from ..contracts.abort import AbortGuard, RunControl
from ..contracts.config import SessionConfig
from ..contracts.errors import ApiError
from ..contracts.events import ContextAction, ContextTruncated, DoneReason
from ..contracts.permissions import OnApiFailure
from ..contracts.provider import MessageComplete, Provider
from ..contracts.tool_api import ToolSource
from ..state.session import Session
from .pacing import RatePacer

Sleep = Callable[[float], Awaitable[object]]
LimitCheck = Callable[[], "tuple[DoneReason, str] | None"]
"""Whether the prompt's money or token budget stops it now: ``(reason, the run's last line)``."""


def no_limit() -> "tuple[DoneReason, str] | None":
    """The check of a run with no prompt (a compaction's request, a test's bare request)."""
    return None


@dataclass(frozen=True)
class Reread:
    """Where a masking started changing the prompt (the history index of the first message it
    changed) and the hidden range then. Until truncation changes the prompt, a request reads
    what comes before that message from the cache, through a one-hour breakpoint the requests
    before the masking placed there (:func:`~.request_context.mask_anchors`); a retry of the request too."""

    first_message: int
    deleted_range: DeletedRange | None

    def position(self, deleted_range: RangeLike) -> int | None:
        """The sent message just before the change, or None once the hidden range moved."""
        if normalize_range(deleted_range) != self.deleted_range:
            return None
        return sent_position(self.first_message, deleted_range) - 1


@dataclass(frozen=True)
class RequestRun:
    """What one request works with: the run's settings, the session, and the run's collaborators."""

    config: SessionConfig
    provider: Provider
    session: Session
    guard: AbortGuard
    control: RunControl
    counter: TokenCounter
    ask_failure: OnApiFailure
    sleep: Sleep
    sources: Sequence[ToolSource]
    context_window: int
    without: set[str] = field(default_factory=set)
    """Request features this endpoint refused (see :mod:`.degrade`): left out of every request;
    the engine's own set, shared by its runs, so a feature stays off for the session."""
    pacer: RatePacer = field(default_factory=RatePacer)
    """What the client knows of the key's shared rate limit (one per provider)."""
    paced: list[int] = field(default_factory=lambda: [0])
    """How many paced waits this run had (a run that waited waits less: see ``pacing.AGEING``)."""
    budget_reached: LimitCheck = no_limit
    """Checked before a failed request is sent again: one that broke off mid-answer was billed."""


@dataclass
class _Attempts:
    """The retry state of one request."""

    model: str
    streak: int = 0  # automatic retries in the current failure streak
    total: int = 0
    overflow_recovered: bool = False
    started: float = field(default_factory=time.perf_counter)
    truncation: ContextTruncated | None = None  # the last change of what the model sees, for the record
    actions: list[ContextAction] = field(default_factory=list)  # client-side layers that acted
    rate_wait_s: float = 0.0  # waited for the shared rate limit so far (bounded by max_rate_limit_wait_s)
    reread: Reread | None = None  # where this request's masking started: a retry reads up to there too
    unanswered: Usage | None = None  # billed attempts cut off mid-answer: the record's row shows their cost


@dataclass(frozen=True)
class StreamEnd:
    """What one stream produced, :func:`stream_with_probe`'s last item (not an event): the complete
    message, or the error and how far the stream got."""

    complete: MessageComplete | None = None
    error: ApiError | None = None
    got_first: bool = False
    partial_text: str = ""  # the text shown before a mid-stream failure
    billed: Usage | None = None  # what a failure after the answer began was billed for (then retried)
