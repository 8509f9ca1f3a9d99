"""What the event handlers (:mod:`.handlers`) use of the live view: :class:`RunView`.

The :class:`~.agent_view.AgentView` dispatches each event to a handler and is the one implementation;
the handlers take this protocol, so they need not import the view that imports them.
"""

from __future__ import annotations

from typing import Protocol

from ...engine.contracts import events as ev
from ...engine.contracts.events import RequestRecord
from .body import RunBody
from .header import Header
from .progress import Activity
from .retry import FailurePrompt, RetryStatus
from .tools import ToolCard


class RunView(Protocol):
    """The view's public members a handler may read or change (a test checks none reaches a ``view._``)."""

    records: list[RequestRecord]
    attempted: int
    cancelled: bool
    done: ev.Done | None
    show_table: bool
    header: Header
    body: RunBody
    activity: Activity

    def begin_request(self) -> None: ...

    def run_tools_of_request(self) -> None: ...

    def start_next_tool(self) -> None: ...

    def schedule_retry(self, event: ev.RetryScheduled | ev.RateLimitWait) -> RetryStatus: ...

    def card(self, tool_use_id: str, name: str) -> ToolCard: ...

    def show_failure(self, event: ev.ApiRequestFailed) -> FailurePrompt: ...

    def interrupted(self, session_cost: float | None = None, unpriced: int = 0) -> None: ...
