"""What may be done to a :class:`~nbagent.engine.loop.query.QueryEngine`'s run from outside it, from
any thread: see which prompt runs, abort it, cut a retry wait short, close the session.

A mixin (moved out of query.py) so that the loop reads apart from its handles; :class:`QueryEngine`
sets the attributes declared here.
"""

from __future__ import annotations

from ..contracts.abort import RunControl
from ..state.session import Session
from .turn import SessionClosedError


class RunHandle:
    """The run's handles for :class:`~nbagent.engine.loop.query.QueryEngine` (which sets these)."""

    session: Session
    closed: bool
    _run: RunControl | None
    _running_prompt: str | None
    _close_after_run: bool

    @property
    def running_prompt(self) -> str | None:
        """The prompt of the run in progress (shortened), or None."""
        return self._running_prompt

    def abort(self) -> None:
        """Abort the run in progress, if any; safe to call from any thread. Never reaches a later run."""
        run = self._run
        if run is not None:
            run.abort()

    def close_session(self) -> None:
        """Release the task folder: now, or (aborting it) when the run in progress has saved its
        end, so that no write of the run lands after the lock is gone; safe from any thread."""
        self._close_after_run = True  # first: a run ending now sees it, or we see it ended
        self.closed = True
        if self._running_prompt is None:
            self.session.close()
        else:
            self.abort()

    def check_open(self) -> None:
        """Raise :class:`SessionClosedError` when the session was closed."""
        if self.closed:
            raise SessionClosedError(self.session.task_dir)

    def retry_now(self) -> None:
        """Cut the current retry wait short; safe to call from any thread."""
        run = self._run
        if run is not None:
            run.retry_now()
