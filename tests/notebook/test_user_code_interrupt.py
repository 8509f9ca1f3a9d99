"""■ and Stop reaching the model's code: what is left behind when a SIGINT lands as the code ends.

The races are driven, not waited for: a stand-in for ``_UserCode.lock`` raises the signal inside its
own acquire, which is where Stop's SIGINT lands when Stop's thread holds the lock while the code's
handler hands it back (Python runs signal handlers while a lock acquire waits).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Iterator

import pytest

from nbagent.notebook import missed_sigint
from nbagent.notebook.user_code_interrupt import _UserCode, interrupt_user_code, raise_on_sigint, watch_sigint


class _SignalledLock:
    """``_UserCode.lock``, but the acquire after :meth:`arm` receives a SIGINT first, as it does
    when Stop's thread (holding the lock) sends one while this thread waits for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.armed = False

    def arm(self) -> None:
        self.armed = True

    def __enter__(self) -> bool:
        if self.armed:
            self.armed = False
            signal.raise_signal(signal.SIGINT)  # its Python handler runs here, as in an interrupted wait
        return self.lock.__enter__()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.lock.__exit__(exc_type, exc, tb)


@pytest.fixture
def kernel_handler() -> Iterator[list[int]]:
    """A handler like ipykernel's for an async cell (it schedules the cancel, raises nothing)."""
    hits: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        hits.append(signum)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield hits
    finally:
        signal.signal(signal.SIGINT, previous)
        _UserCode.running, _UserCode.owner, _UserCode.only_code = False, None, False


def test_a_stop_landing_as_the_code_ends_reaches_the_kernel_and_leaves_nothing_behind(kernel_handler, monkeypatch):
    lock = _SignalledLock()
    monkeypatch.setattr(_UserCode, "lock", lock)
    installed = signal.getsignal(signal.SIGINT)
    owner = object()
    escaped: list[BaseException] = []
    try:
        with raise_on_sigint(owner):
            lock.arm()  # the code is over: its handler now hands the lock back, and the SIGINT comes
    except KeyboardInterrupt as exc:  # the old exit raised it, from the wait, out of a finished code
        escaped.append(exc)
    assert escaped == []
    assert kernel_handler == [signal.SIGINT]  # the ■ between code pieces, as the kernel handles it
    assert signal.getsignal(signal.SIGINT) is installed
    assert (_UserCode.running, _UserCode.owner) == (False, None)


def test_after_a_code_handler_that_never_left_stop_no_longer_signals_the_main_thread(kernel_handler):
    owner = object()
    installed = signal.getsignal(signal.SIGINT)
    with watch_sigint(owner):
        # A KeyboardInterrupt raised as the code's handler was entering its exit (at its first line)
        # skips that exit: the handler and its "code runs now" stay, until the execution's end.
        raise_on_sigint(owner).__enter__()
    assert signal.getsignal(signal.SIGINT) is installed
    assert (_UserCode.running, _UserCode.owner) == (False, None)
    assert missed_sigint.watching() is None  # its watch for a missed ■ ended with the execution
    sent: list[bool] = []
    worker = threading.Thread(target=lambda: sent.append(interrupt_user_code()))
    worker.start()
    worker.join()
    assert sent == [False] and kernel_handler == []  # a later Stop, with no code running: no SIGINT

