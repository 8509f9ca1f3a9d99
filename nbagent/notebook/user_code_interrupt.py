"""■ and Stop reaching the model's code while it runs synchronously on the kernel's main thread.

ipykernel's SIGINT handler for an async cell only schedules the cell's cancellation, for its next
await: code that never awaits (an endless loop, a blocking ``__repr__``) would run on. While such
code runs, :class:`raise_on_sigint` makes SIGINT raise ``KeyboardInterrupt`` in it;
:class:`watch_sigint` remembers one that came just before; :func:`interrupt_user_code` sends one
from another thread (Stop, a tool's timeout, a serve client's interrupt).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Callable, Union

from ..engine.contracts.tool_api import ToolOutput
from . import missed_sigint
from .missed_sigint import sigint_kept_from_new_threads


class _UserCode:
    """Whether the model's code runs on the main thread now, so that Stop can interrupt it.

    Synchronous code blocks the agent's event loop, so an abort (Stop, pressed on another thread:
    the widget's comm reaches a subshell or the nbagent kernel's shell-channel thread) is not
    seen until the code returns. :func:`interrupt_user_code` then does what ■ does: a SIGINT to
    the main thread, which :class:`raise_on_sigint` turns into ``KeyboardInterrupt`` in the code.
    """

    lock = threading.Lock()
    running = False
    only_code = False  # a timeout: interrupt the code, not the cell (the agent goes on)
    owner: object = None
    """The executor whose code runs now: a timeout or a client's interrupt names the executor it
    is for, and never reaches another's (a client's run that awaits leaves the loop to the agent)."""


def interrupt_user_code(*, only_code: bool = False, owner: object = None) -> bool:
    """Interrupt the model's code running on the main thread (thread-safe); ``False`` if none runs.

    ``only_code``: raise in the code only (a tool's timeout), without the kernel's own interrupt
    handler, which would also cancel the cell and so the agent's run. ``owner``: only code that
    executor runs (``None``: any, as ■ and Stop)."""
    with _UserCode.lock:
        if not _UserCode.running or threading.current_thread() is threading.main_thread():
            return False
        if owner is not None and _UserCode.owner is not owner:
            return False
        _UserCode.only_code = only_code
        # A real signal to the main thread, as ■ sends: it also wakes a blocking call (time.sleep,
        # a socket read) with EINTR, which _thread.interrupt_main's simulated signal does not.
        main = threading.main_thread().ident
        if main is None:
            return False
        signal.pthread_kill(main, signal.SIGINT)
        return True


CANCEL_TURNS = 8
"""Loop turns ipykernel's SIGINT handler for an async cell needs to cancel the cell (a callback that
sets a future, whose done callback cancels the cell's task, which then wakes): 3, with room."""


class watch_sigint:
    """For the whole of one execution on the main thread: a SIGINT that comes while none of the
    code's own handlers (:class:`raise_on_sigint`) is in place (before the code starts, between its
    body, its tail and its repr) goes on to the kernel's handler as before, and is remembered, so
    that the code's next handler raises it into the code at once instead of letting it run on:
    ipykernel's handler only schedules a cancellation for the cell's next await, which code that
    never awaits (an endless loop, a blocking ``__repr__``) never reaches (■ was lost)."""

    def __init__(self, owner: object) -> None:
        self.owner = owner
        self.previous: _Handler = None

    def __enter__(self) -> None:
        _PENDING_SIGINT.pop(id(self.owner), None)
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        owner_id = id(self.owner)

        def handler(signum: int, frame: FrameType | None) -> None:
            if _UserCode.only_code:  # a timeout's, meant for code that just returned: dropped
                _UserCode.only_code = False
                return
            _PENDING_SIGINT[owner_id] = True
            if callable(previous):
                previous(signum, frame)

        try:
            signal.signal(signal.SIGINT, handler)
            self.previous = previous
        except (ValueError, TypeError):
            self.previous = None

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        with _UserCode.lock:  # a code handler a SIGINT kept from its own exit: Stop must not signal on
            if _UserCode.owner is self.owner:
                _UserCode.running, _UserCode.owner = False, None
        missed_sigint.stop(missed_sigint.watching())  # nor a ■ be woken again after the code
        _PENDING_SIGINT.pop(id(self.owner), None)


_PENDING_SIGINT: dict[int, bool] = {}
"""Executors (by id) whose execution saw a SIGINT outside its code's own handlers (:class:`watch_sigint`)."""


_Handler = Union[Callable[[int, Union[FrameType, None]], object], int, None]
"""A signal handler as ``signal.getsignal`` returns it."""


class raise_on_sigint:
    """While synchronous code runs on the main thread, make SIGINT raise ``KeyboardInterrupt``
    after the previous handler ran (ipykernel's handler for async cells only schedules a cancel).
    One whose delivery did not end a blocking call in the code is woken again
    (:mod:`.missed_sigint`)."""

    def __init__(self, owner: object = None) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        self.previous: _Handler = None
        self.watch: object = None  # missed_sigint's token: a ■ that misses a blocking call is sent again
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum: int, frame: FrameType | None) -> None:
            missed_sigint.note_handled()
            if _UserCode.only_code:
                _UserCode.only_code = False
            elif callable(previous) and previous is not signal.default_int_handler:
                previous(signum, frame)
            raise KeyboardInterrupt

        self.watch = missed_sigint.start()  # before the handler: no SIGINT to it goes unseen
        try:
            signal.signal(signal.SIGINT, handler)
            self.previous = previous
        except (ValueError, TypeError):  # not the main interpreter / an unusual handler
            self.previous = None
            missed_sigint.stop(self.watch)
            return
        with _UserCode.lock:
            _UserCode.running, _UserCode.owner = True, self.owner
        if _PENDING_SIGINT.pop(id(self.owner), False):  # a ■ came before the code could take it
            self.__exit__()
            raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self.previous is None:
            return
        # The previous handler first: a Stop sent while this thread waits for the lock below (its
        # sender holds it) lands during the wait, and Python runs the handler there. The code's own
        # handler raised that KeyboardInterrupt out of this method: itself left installed and
        # ``running`` left set, so every later Stop signalled the main thread, code or no code.
        # The previous handler takes it as a ■ between the code's pieces (watch_sigint).
        try:
            signal.signal(signal.SIGINT, self.previous)
        finally:
            try:
                missed_sigint.stop(self.watch)  # its lock too is waited for with the previous handler back
            finally:
                with _UserCode.lock:
                    _UserCode.running, _UserCode.owner = False, None


class interrupt_after:
    """Interrupt the kernel's main thread after ``seconds`` (synchronous code blocks the loop, so
    an asyncio timeout would never fire): the same SIGINT the Stop button sends."""

    def __init__(self, seconds: float, owner: object = None) -> None:
        self.owner = owner  # the executor running the code: another's code is never interrupted
        self.seconds = seconds
        self.fired = False
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True

    def _fire(self) -> None:
        self.fired = interrupt_user_code(only_code=True, owner=self.owner)

    def __enter__(self) -> "interrupt_after":
        if hasattr(signal, "pthread_kill"):
            with sigint_kept_from_new_threads():
                self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()

    def noted(self, out: ToolOutput) -> ToolOutput:
        """``out`` saying that the time limit stopped the code: its ``KeyboardInterrupt`` alone reads
        as the user's ■, and a caller would not know that a larger ``timeout_s`` lets it finish."""
        if not self.fired:
            return out
        note = (f"[timed out: interrupted after timeout_s={self.seconds:g} s, the limit of this call, not by the "
                "user; call again with a larger timeout_s to let it run longer]")
        if isinstance(out.content, str):
            return ToolOutput(f"{out.content}\n{note}", is_error=True, display=out.display)
        return ToolOutput([*out.content, {"type": "text", "text": note}], is_error=True, display=out.display)


__all__ = ["CANCEL_TURNS", "interrupt_after", "interrupt_user_code", "raise_on_sigint", "sigint_kept_from_new_threads",
           "watch_sigint"]
