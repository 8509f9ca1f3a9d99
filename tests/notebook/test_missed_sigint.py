"""A ■ whose SIGINT did not end the blocking call of the model's code: woken again, once.

A missed ■ is made as the kernel makes it: the SIGINT is taken by another thread while the main
thread is already inside ``time.sleep`` (seen in /proc, not guessed with a sleep), so it only sets
Python's flag and the sleep goes on.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nbagent.notebook import missed_sigint
from nbagent.notebook.missed_sigint import GRACE_S
from nbagent.notebook.user_code_interrupt import raise_on_sigint

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and pthread_kill: Linux")


def _in_nanosleep(native_id: int) -> bool:
    return "nanosleep" in Path(f"/proc/self/task/{native_id}/wchan").read_text()


class _OtherThreadTakesSigint(threading.Thread):
    """Once the main thread sleeps, takes a SIGINT itself, as the kernel may hand it the ■."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.main = threading.get_native_id()
        self.main_sleeps_next = threading.Event()
        self.sent_at: float | None = None

    def run(self) -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # open to it, as ipykernel's threads are
        self.main_sleeps_next.wait()
        give_up = time.monotonic() + 4
        while not _in_nanosleep(self.main):  # the main thread holds no GIL once inside: a few turns
            if time.monotonic() > give_up:
                return  # wchan not shown here: the test is skipped
        self.sent_at = time.monotonic()
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)


def test_a_sigint_another_thread_took_still_interrupts_the_code_blocked_in_sleep():
    other = _OtherThreadTakesSigint()
    other.start()
    with pytest.raises(KeyboardInterrupt):
        with raise_on_sigint():
            other.main_sleeps_next.set()
            time.sleep(5)
    raised_at = time.monotonic()
    other.join()
    if other.sent_at is None:
        pytest.skip("this system's /proc does not show a thread's nanosleep")
    assert raised_at - other.sent_at < 3 * GRACE_S  # not the 5 s the sleep asked for
    assert signal.set_wakeup_fd(-1) == -1  # the wakeup fd is the one before again (none)
    assert missed_sigint.watching() is None


def test_code_that_caught_its_interrupt_is_not_interrupted_again():
    libc = ctypes.CDLL(None, use_errno=True)
    caught: list[str] = []
    with raise_on_sigint():
        try:
            signal.raise_signal(signal.SIGINT)  # the ■, handled at once
        except KeyboardInterrupt:
            caught.append("■")
        # The code goes on into a blocking call that reports a signal instead of resuming (the
        # C library's, not Python's): it sleeps past the grace, undisturbed.
        slept = libc.usleep(int(2 * GRACE_S * 1_000_000))
    assert caught == ["■"]
    assert slept == 0, f"woken again: errno {ctypes.get_errno()}"


def test_a_wakeup_fd_set_before_the_code_still_gets_its_signals_and_is_put_back():
    theirs, their_writer = socket.socketpair()
    their_writer.setblocking(False)
    before = signal.set_wakeup_fd(their_writer.fileno())
    try:
        with raise_on_sigint():
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass
        assert signal.set_wakeup_fd(their_writer.fileno()) == their_writer.fileno()
        theirs.settimeout(5)  # the watcher's thread passes it on: waited for, not slept
        assert theirs.recv(16) == bytes([signal.SIGINT])
    finally:
        signal.set_wakeup_fd(before)
        theirs.close()
        their_writer.close()


def _usleep_past_the_grace() -> int:
    """A blocking call that reports a signal (the C library's, not Python's, which resumes)."""
    return int(ctypes.CDLL(None, use_errno=True).usleep(int(2 * GRACE_S * 1_000_000)))


NEXT_PIECE_AFTER_A_HANDLED_INTERRUPT = """\
import ctypes, signal
from nbagent.notebook.missed_sigint import GRACE_S
from nbagent.notebook.user_code_interrupt import raise_on_sigint
with raise_on_sigint():
    try:
        signal.raise_signal(signal.SIGINT)  # handled at once
    except KeyboardInterrupt:
        pass
with raise_on_sigint():  # the next piece (a tail's repr, the next call), µs later: no ■ for it
    print(ctypes.CDLL(None, use_errno=True).usleep(int(2 * GRACE_S * 1_000_000)), ctypes.get_errno())
"""


def test_a_handled_interrupt_of_the_code_before_does_not_wake_the_code_started_next():
    # A fresh interpreter: its watcher thread is idle (blocked reading) when the ■ comes, so it
    # reads the byte only after the next piece has started, as it does in a kernel.
    run = subprocess.run([sys.executable, "-c", NEXT_PIECE_AFTER_A_HANDLED_INTERRUPT], capture_output=True,
                         text=True, timeout=60)
    assert run.stdout.split() == ["0", "0"], f"woken for the ■ of the code before (usleep, errno): {run}"


def test_a_child_the_code_forked_does_not_count_its_interrupts_as_the_codes():
    with raise_on_sigint():
        try:
            signal.raise_signal(signal.SIGINT)  # the code's own ■, handled
        except KeyboardInterrupt:
            pass
        pid = os.fork()  # as multiprocessing's workers are started (they get the ■ too: a process group's)
        if pid == 0:
            try:
                signal.signal(signal.SIGINT, lambda *_: None)
                os.kill(os.getpid(), signal.SIGINT)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)  # the child's SIGINT has been taken
        slept = _usleep_past_the_grace()
    assert slept == 0, f"woken for the child's ■: errno {ctypes.get_errno()}"


class _InterruptedAsTheEndIsSent:
    """The watcher's writer, where a ■ lands just as stop()'s end byte has gone out: outside a kernel
    the previous handler (back by then) raises there."""

    def __init__(self, writer: socket.socket) -> None:
        self.writer = writer

    def fileno(self) -> int:
        return self.writer.fileno()

    def send(self, data: bytes) -> int:
        self.writer.send(data)
        raise KeyboardInterrupt


def test_an_interrupt_landing_as_the_code_ends_does_not_stop_later_missed_ones_being_woken(monkeypatch):
    with raise_on_sigint():  # the watcher and its socket exist
        pass
    monkeypatch.setattr(missed_sigint._Watch, "writer", _InterruptedAsTheEndIsSent(missed_sigint._Watch.writer))
    with pytest.raises(KeyboardInterrupt):
        with raise_on_sigint():
            pass
    monkeypatch.undo()
    test_a_sigint_another_thread_took_still_interrupts_the_code_blocked_in_sleep()


def test_a_wakeup_fd_set_before_is_put_back_even_after_an_interrupt_landed_in_the_end_of_the_code_before(monkeypatch):
    theirs, their_writer = socket.socketpair()
    their_writer.setblocking(False)
    before = signal.set_wakeup_fd(their_writer.fileno())
    try:
        def interrupted() -> None:  # a ■ lands in stop() before the wakeup fd is put back (outside a kernel)
            raise KeyboardInterrupt

        with monkeypatch.context() as patch:
            patch.setattr(missed_sigint, "_restore_wakeup_fd", interrupted)
            with pytest.raises(KeyboardInterrupt):
                with raise_on_sigint():
                    pass
        with raise_on_sigint():  # the next code: its end puts back the wakeup fd from before both
            pass
        assert signal.set_wakeup_fd(their_writer.fileno()) == their_writer.fileno()
    finally:
        signal.set_wakeup_fd(before)
        theirs.close()
        their_writer.close()
