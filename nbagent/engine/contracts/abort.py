"""Abort that reaches whatever the loop is awaiting, at no cost per stream chunk.

One watcher per run cancels the loop's task when the abort event fires, but only while the loop is
inside an :meth:`AbortGuard.armed` region (awaiting the network, a tool or a retry wait). While the
loop is suspended at a ``yield`` the consumer owns the task, so the guard never cancels it then;
the loop checks :meth:`AbortGuard.check` when it resumes instead.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Callable, Literal

from .errors import NbAgentError


class Aborted(NbAgentError):
    """The run was aborted (Stop button, kernel interrupt, ``abort.set()``)."""

    def __init__(self) -> None:
        super().__init__("aborted by the user")


class WatchedEvent(asyncio.Event):
    """An ``asyncio.Event`` that calls its watchers when set: a guard watches it with no task."""

    def __init__(self) -> None:
        super().__init__()
        self.watchers: list[Callable[[], None]] = []

    def set(self) -> None:
        super().set()
        for watcher in list(self.watchers):
            watcher()


class AbortGuard:
    """Turns ``abort.set()`` into :class:`Aborted` at the loop's current await."""

    def __init__(self, abort: asyncio.Event | None) -> None:
        self.abort = abort
        self._task: asyncio.Task[object] | None = None
        self._waiter: asyncio.Future[Literal[True]] | None = None
        self._armed = False
        self._fired = False
        self._region = _ArmedRegion(self)  # one object for every region: entered per streamed chunk

    def start(self) -> None:
        """Begin watching (call from inside the loop's task)."""
        if self.abort is None or self._waiter is not None or self._task is not None:
            return
        self._task = asyncio.current_task()
        if isinstance(self.abort, WatchedEvent):  # no waiter task per run (nothing left to collect)
            self.abort.watchers.append(self._fire)
            return
        self._waiter = asyncio.ensure_future(self.abort.wait())
        self._waiter.add_done_callback(self._on_abort)

    def stop(self) -> None:
        """Stop watching; safe to call twice."""
        if isinstance(self.abort, WatchedEvent) and self._fire in self.abort.watchers:
            self.abort.watchers.remove(self._fire)
        if self._waiter is not None:
            self._waiter.remove_done_callback(self._on_abort)
            self._waiter.cancel()
            self._waiter = None

    @property
    def is_set(self) -> bool:
        return self.abort is not None and self.abort.is_set()

    def check(self) -> None:
        """Raise :class:`Aborted` if the abort event is set."""
        abort = self.abort  # not through is_set: this runs for every streamed chunk
        if abort is not None and abort.is_set():
            raise Aborted()

    def _on_abort(self, fut: asyncio.Future[Literal[True]]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return  # the watcher itself failed (e.g. an event bound to another loop): not an abort
        self._fire()

    def _fire(self) -> None:
        if not self._armed or self._task is None or self._fired:
            return
        self._fired = True
        self._task.cancel()

    def armed(self) -> "_ArmedRegion":
        """A region whose awaits are interrupted by the abort event (raising :class:`Aborted`)."""
        return self._region

    def _consume_cancel(self) -> None:
        """Undo the cancellation request we made, so the task is not left half-cancelled."""
        self._fired = False
        uncancel = getattr(self._task, "uncancel", None)
        if uncancel is not None:
            uncancel()


class RunControl:
    """One run's abort and *Retry now* signals, set safely from any thread.

    Each run gets a fresh control, so an abort pressed as one run ends can never reach the next
    one. Before :meth:`bind` (the run has not started its loop yet) a press is remembered; on the
    run's own thread the event is set at once (a deferred set would let the loop run on through
    another chunk, tool call or request); from other threads it is handed to the run's loop.
    """

    def __init__(self) -> None:
        self.abort_event: asyncio.Event | None = None
        self.retry_now_event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._lock = threading.RLock()  # re-entrant: a signal handler may press abort mid-bind
        self._pending_abort = False

    @property
    def aborted(self) -> bool:
        return self._pending_abort or bool(self.abort_event and self.abort_event.is_set())

    def bind(self) -> None:
        """Create the run's events on the running loop (call from the run's task)."""
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._thread = threading.get_ident()
            self.abort_event = WatchedEvent()
            self.retry_now_event = asyncio.Event()
            if self._pending_abort:
                self.abort_event.set()

    def abort(self) -> None:
        """Abort this run (thread-safe, idempotent)."""
        with self._lock:
            self._pending_abort = True
            self._set(self.abort_event)

    def retry_now(self) -> None:
        """Cut this run's current retry wait short (thread-safe)."""
        with self._lock:
            self._set(self.retry_now_event)

    def _set(self, event: asyncio.Event | None) -> None:
        loop = self._loop
        if event is None or loop is None:
            return
        if threading.get_ident() == self._thread:
            event.set()
        elif not loop.is_closed():
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop closed in between: the run is over
                pass


class _ArmedRegion:
    """:meth:`AbortGuard.armed` as a plain context manager (a generator-based one per streamed
    chunk was a measurable part of the loop's cost)."""

    __slots__ = ("guard",)

    def __init__(self, guard: AbortGuard) -> None:
        self.guard = guard

    def __enter__(self) -> None:
        self.guard.check()
        self.guard._armed = True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        guard = self.guard
        guard._armed = False
        if exc_type is None:
            if guard._fired:  # the awaited code swallowed our cancellation and returned: still an abort
                guard._consume_cancel()
                raise Aborted()
            return False
        if not guard._fired or not issubclass(exc_type, Exception | asyncio.CancelledError):
            return False  # not ours (e.g. the kernel's interrupt): let it propagate
        guard._consume_cancel()
        if issubclass(exc_type, asyncio.CancelledError):
            cancelling = getattr(guard._task, "cancelling", None)
            if cancelling is not None and cancelling() > 0:
                # Someone else cancelled too (the kernel's interrupt sets our abort *and* cancels
                # the cell): theirs must propagate, never be swallowed.
                return False
            raise Aborted() from None
        raise Aborted() from exc  # the awaited code turned our cancellation into its own error
