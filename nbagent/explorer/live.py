"""What the explorer reads from a live session, through the Agent's public surface only.

The surface (guaranteed by :class:`~nbagent.agent.Agent`): ``history`` (the messages),
``records`` (per request: ``request``, ``deleted_range``, ``keep``, ``estimated_input_tokens``),
``sent`` (per request: ``system``, ``messages``, ``turn``), ``context_window`` and
``provider.name``. Never the engine behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

from ..engine.api_facts.tokens import TokenCounter

if TYPE_CHECKING:
    from ..engine.contracts.events import RequestRecord
    from ..engine.contracts.messages import Message
    from ..engine.state.sent import SentRequest


class AgentSurface(Protocol):
    """What the explorer reads of an :class:`~nbagent.agent.Agent` (its public surface)."""

    @property
    def history(self) -> Sequence[Message]: ...

    @property
    def sent(self) -> Sequence[SentRequest]: ...

    @property
    def records(self) -> Sequence[RequestRecord]: ...

    @property
    def context_window(self) -> int: ...


@runtime_checkable
class HoldsAgent(Protocol):
    """A session that holds its Agent as ``.agent`` (the notebook's session)."""

    @property
    def agent(self) -> AgentSurface: ...


LiveSession = Union[AgentSurface, HoldsAgent]
"""What the explorers replay: an Agent, or a session holding one."""


@dataclass(frozen=True)
class LiveSource:
    """What the explorer takes from a live session: its history and what each request carried.

    ``system`` is the system prompt of the latest request and ``extra_tokens`` the estimated size
    of its tool definitions (estimate recorded by the loop minus system and messages), so replayed
    requests are as large as the real ones. ``actual`` lists the session's own range changes
    as ``(request, range, keep)``, for comparison with the replay (which uses estimates).
    """

    history: tuple[Message, ...]
    window: int
    system: str | None = None
    extra_tokens: int = 0
    provider: str = "?"
    actual: tuple[tuple[int, tuple[int, int] | None, str | None], ...] = ()


def live_source(session: LiveSession) -> LiveSource:
    """Read an ``Agent``, or anything with an ``.agent`` (the notebook session)."""
    agent = session.agent if isinstance(session, HoldsAgent) else session
    history = tuple(agent.history)
    sent = list(agent.sent)
    records = list(agent.records)
    system = sent[-1].system if sent else None
    extra = 0
    if sent and records and records[-1].estimated_input_tokens:
        shown = TokenCounter().count_request(sent[-1].messages, sent[-1].system)
        extra = max(records[-1].estimated_input_tokens - shown, 0)
    actual: list[tuple[int, tuple[int, int] | None, str | None]] = []
    previous: tuple[int, int] | None = None
    for r in records:
        if r.deleted_range != previous:
            actual.append((r.request, r.deleted_range, r.keep))
        previous = r.deleted_range
    provider = getattr(getattr(agent, "provider", None), "name", "?")
    return LiveSource(history, int(agent.context_window), system, extra, str(provider), tuple(actual))


__all__ = ["AgentSurface", "HoldsAgent", "LiveSession", "LiveSource", "live_source"]
