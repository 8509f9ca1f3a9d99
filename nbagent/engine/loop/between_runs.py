"""What a :class:`~nbagent.engine.loop.query.QueryEngine` does to its session between runs:
:meth:`~BetweenRuns.compact`, refused while a run is in progress, and the compaction a run makes
itself (``_compact``). Rollback is :func:`nbagent.engine.loop.rollback.rollback`.

A mixin (moved out of query.py) so that the loop and the session's undo/summary operations read
apart; :class:`QueryEngine` sets the attributes declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncGenerator, AsyncIterator

from ..contracts.abort import RunControl
from ..contracts.events import Event
from ..contracts.hooks import Hooks
from ..contracts.provider import Provider
from ..state.session import Session
from .facts import KernelFactsTracker
from .notes import SessionNotes
from .request_run import RequestRun
from .run_handle import RunHandle
from .summary_layer import SummaryLayer
from .turn import RunInProgressError

if TYPE_CHECKING:
    from ..contracts.permissions import Asker
    from .sanitize import Sanitizer


class BetweenRuns(RunHandle):
    """Compaction for :class:`~nbagent.engine.loop.query.QueryEngine` (which sets these)."""

    provider: Provider
    session: Session
    hooks: Hooks
    _facts: KernelFactsTracker
    _notes: SessionNotes
    _summary: SummaryLayer

    def _request_run(self, control: RunControl, asker: Asker | None) -> RequestRun:
        raise NotImplementedError

    def sanitizer(self) -> Sanitizer:
        raise NotImplementedError

    async def compact(self, instructions: str | None = None) -> AsyncIterator[Event]:
        """Summarise what truncation would hide now (``%agent compact``); not during a run.
        A failure is a warning notice and leaves the history as it was. A closed session refuses
        (:class:`~nbagent.engine.loop.query.SessionClosedError`) before the summary request."""
        self.check_open()
        if self._running_prompt is not None:
            raise RunInProgressError(self._running_prompt)
        control = RunControl()
        control.bind()
        run = self._request_run(control, None)
        try:
            async for event in self._compact(run, self.session.turn, instructions):
                yield event
        finally:
            run.guard.stop()
            self.session.save_events()

    async def _compact(self, run: RequestRun, turn: int, instructions: str | None) -> AsyncGenerator[Event, None]:
        async for event in self._summary.compact(self.session, self.provider, self.hooks, run.config, turn=turn,
                                                 context_window=run.context_window, instructions=instructions,
                                                 redact=self.sanitizer().redact):
            yield self.session.log(event)
