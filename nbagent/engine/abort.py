"""Abort that reaches whatever the loop is awaiting, at no cost per stream chunk.

One watcher per run cancels the loop's task when the abort event fires, but only while the loop is
inside an :meth:`AbortGuard.armed` region (awaiting the network, a tool or a retry wait). While the
loop is suspended at a ``yield`` the consumer owns the task, so the guard never cancels it then;
the loop checks :meth:`AbortGuard.check` when it resumes instead.
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from typing import Iterator

from .errors import NbAgentError


class Aborted(NbAgentError):
    """The run was aborted (Stop button, kernel interrupt, ``abort.set()``)."""

    def __init__(self) -> None:
        super().__init__("aborted by the user")


class AbortGuard:
    """Turns ``abort.set()`` into :class:`Aborted` at the loop's current await."""

    def __init__(self, abort: asyncio.Event | None) -> None:
        self.abort = abort
        self._task: asyncio.Task | None = None
        self._waiter: asyncio.Future | None = None
        self._armed = False
        self._fired = False

    def start(self) -> None:
        """Begin watching (call from inside the loop's task)."""
        if self.abort is None or self._waiter is not None:
            return
        self._task = asyncio.current_task()
        self._waiter = asyncio.ensure_future(self.abort.wait())
        self._waiter.add_done_callback(self._on_abort)

    def stop(self) -> None:
        """Stop watching; safe to call twice."""
        if self._waiter is not None:
            self._waiter.remove_done_callback(self._on_abort)
            self._waiter.cancel()
            self._waiter = None

    @property
    def is_set(self) -> bool:
        return self.abort is not None and self.abort.is_set()

    def check(self) -> None:
        """Raise :class:`Aborted` if the abort event is set."""
        if self.is_set:
            raise Aborted()

    def _on_abort(self, fut: asyncio.Future) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return  # the watcher itself failed (e.g. an event bound to another loop): not an abort
        if not self._armed or self._task is None or self._fired:
            return
        self._fired = True
        self._task.cancel()

    @contextmanager
    def armed(self) -> Iterator[None]:
        """A region whose awaits are interrupted by the abort event (raising :class:`Aborted`)."""
        self.check()
        self._armed = True
        try:
            yield
        except asyncio.CancelledError:
            if self._fired:
                self._consume_cancel()
                cancelling = getattr(self._task, "cancelling", None)
                if cancelling is not None and cancelling() > 0:
                    # Someone else cancelled too (the kernel's interrupt sets our abort *and*
                    # cancels the cell): theirs must propagate, never be swallowed.
                    raise
                raise Aborted() from None
            raise  # not ours (e.g. the kernel's interrupt): let it propagate
        except Exception as exc:
            if self._fired:  # the awaited code turned our cancellation into its own error
                self._consume_cancel()
                raise Aborted() from exc
            raise
        finally:
            self._armed = False
        if self._fired:
            # The awaited code swallowed our cancellation and returned: still an abort.
            self._consume_cancel()
            raise Aborted()

    def _consume_cancel(self) -> None:
        """Undo the cancellation request we made, so the task is not left half-cancelled."""
        self._fired = False
        uncancel = getattr(self._task, "uncancel", None)
        if uncancel is not None:
            uncancel()


def event_for_running_loop(event: asyncio.Event) -> asyncio.Event:
    """The same ``event``, usable on the running loop.

    An asyncio.Event binds to the first loop that waits on it, and each ``run_sync`` call gets a
    new loop. Callers hold on to the object (the kernel's interrupt registry, a user's
    ``config.abort``), so it is rebound rather than replaced; that is safe only with no waiters,
    which is the case between runs. Only if waiters remain does a fresh event stand in.
    """
    bound = getattr(event, "_loop", None)
    if bound is None or bound is asyncio.get_running_loop():
        return event
    if not getattr(event, "_waiters", None):
        event._loop = None  # type: ignore[attr-defined]  # asyncio's _LoopBoundMixin rebinds lazily
        return event
    fresh = asyncio.Event()
    if event.is_set():
        fresh.set()
    return fresh
