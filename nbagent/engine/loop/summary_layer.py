"""The context policy's ``summary`` layer in the loop: when it acts, and its circuit breaker.

The summary itself (one request, where the history is cut) is :mod:`.compaction`; this module
decides when the loop asks for one (the previous request reached :func:`summary_trigger`, or the
older ``auto_compact`` fraction) and switches the layer off for the session after ``failures``
failures in a row (Claude Code stops after 3), so a broken summariser does not burn a request per
turn; the next layers (truncation) then keep the conversation in the window.
"""

from __future__ import annotations

from typing import AsyncIterator, Callable, Sequence

from ..context import RequestUsage, get_context_window_info, should_compact_context_window
from ..contracts.config import SessionConfig
from ..contracts.context_policy import ContextPolicy
from ..contracts.events import Event, Notice
from ..contracts.hooks import Hooks
from ..contracts.messages import Message
from ..contracts.provider import Provider
from ..state.session import Session
from .compaction import NOTHING_TO_COMPACT, compact_session, hidden_end

__all__ = ["SummaryLayer", "summary_trigger"]


def summary_trigger(config: SessionConfig, context_window: int) -> int:
    """Where the summary layer acts: the previous request reached window − max_tokens − headroom
    (Claude Code's rule), but never later than truncation would (Cline's max allowed size)."""
    headroom = ContextPolicy.parse(config.context).options.headroom  # stored parsed: returned as it is
    room = context_window - config.max_tokens - headroom
    return int(min(max(room, 1), get_context_window_info(context_window).max_allowed_size - 1))


class SummaryLayer:
    """One session's summary layer: :meth:`due` before each request, :meth:`compact` to act."""

    def __init__(self) -> None:
        self.failures = 0
        """Summary compactions failed in a row (the circuit breaker counts them)."""

    def due(self, config: SessionConfig, previous: RequestUsage | None, context_window: int,
            history: Sequence[Message]) -> bool:
        """Whether to compact before the next request, given the previous request's usage. Not
        while there is nothing to summarise (too little since the task or the last summary): that
        is no failure of the summariser, and it would be a warning at every request."""
        if previous is None:
            return False
        if config.auto_compact is not None:
            due = should_compact_context_window(previous.total, context_window, config.auto_compact)
        else:
            policy = ContextPolicy.parse(config.context)
            if not policy.has("summary") or self.failures >= policy.options.failures:
                return False
            due = previous.total >= summary_trigger(config, context_window)
        return due and hidden_end(history) is not None

    async def compact(self, session: Session, provider: Provider, hooks: Hooks, config: SessionConfig, *,
                      turn: int, context_window: int, instructions: str | None,
                      redact: Callable[[str], str]) -> AsyncIterator[Event]:
        """Compact now (see :func:`~.compaction.compact_session`) and count the outcome; the
        events are not logged (the caller logs them). ``redact`` cleans a failure's message, which
        can carry an error body echoing a secret."""
        if hidden_end(session.history) is None:  # nothing to send: no failure of the summariser to count
            yield Notice(level="info", message=NOTHING_TO_COMPACT)
            return
        before = len(session.compactions)
        async for event in compact_session(session, provider, hooks, config, turn=turn,
                                           context_window=context_window, instructions=instructions):
            yield Notice(level=event.level, message=redact(event.message)) if isinstance(event, Notice) else event
        self.failures = 0 if len(session.compactions) > before else self.failures + 1
        policy = ContextPolicy.parse(config.context)
        limit = policy.options.failures
        if self.failures == limit and policy.has("summary"):
            yield Notice(level="warning", message=(
                f"Summary compaction failed {limit} times in a row and is off for this session; "
                "the next layers of the context policy (truncation) keep the conversation in the window."))
