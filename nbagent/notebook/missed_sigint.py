"""A ■ whose SIGINT did not wake the model's code blocked in a system call: woken once more.

Python runs a signal's handler on the main thread, between bytecodes; a blocking call
(``time.sleep``, a socket read) ends early only by the EINTR the signal's delivery gives it. A ■
missed that in two ways: the signal landed in the microseconds between the interpreter's last
check and the start of the call, or the kernel handed the process-directed SIGINT to another
thread (on the stock python3 kernel ipykernel's threads can take it). Either way the handler stayed
pending, and ``time.sleep(30)`` in the model's code slept its full 30 s before the ■ raised.

While that code runs (:class:`~.user_code_interrupt.raise_on_sigint`), Python writes each signal's
number to a wakeup fd of ours (``signal.set_wakeup_fd``; bytes meant for the one before go on to
it), which a thread reads. When a SIGINT came and the code's handler has not run within
:data:`GRACE_S`, the main thread gets :data:`WAKE_SIGNAL`, whose handler does nothing: its EINTR
ends the blocking call, which then runs the pending handler, and the ■ raises. Not SIGINT again: a
■ whose handler did run (code that caught the ``KeyboardInterrupt`` and sleeps on) would get a
second one the user never pressed, while a needless wake at worst restarts a sleep (PEP 475).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Iterator

GRACE_S = 0.5
"""How long a SIGINT may stay unhandled on the main thread, while the model's code runs, before
the main thread is woken again."""

WAKE_SIGNAL: int | None = getattr(signal, "SIGURG", None)
"""The signal that only wakes: ignored by default, so one that comes late harms nothing, and
nothing in a kernel handles it (out-of-band socket data)."""


@contextmanager
def sigint_kept_from_new_threads() -> Iterator[None]:
    """Threads started inside keep SIGINT blocked (a thread inherits its creator's signal mask), so
    that ■ goes to the main thread. The kernel picks any thread that does not block it; one taken
    by another thread only sets Python's flag, and code blocked in ``time.sleep(30)`` on the main
    thread sleeps on to its end (the nbagent kernel blocks it in ipykernel's threads; this is for
    nbagent's own, started later from the main thread: the view's clock runs while the code blocks)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: interrupts are not signals there
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Watch:
    """The one watcher of the process, and what it knows of the code running now."""

    lock = threading.Lock()
    reader: socket.socket | None = None
    writer: socket.socket | None = None
    thread: threading.Thread | None = None
    active: object = None  # the running code's token (see start); None: no model code runs
    forward = -1  # the wakeup fd before ours, which gets every byte too
    received = 0  # SIGINTs the wakeup fd showed while the code runs
    handled = 0  # runs of the code's SIGINT handler meanwhile (written on the main thread only)
    woken_for = 0  # ``received`` when the main thread was last woken
    deadline: float | None = None  # when an unhandled SIGINT gets its wake
    retired: list[socket.socket] = []  # a gone watcher's sockets, kept open: their fds are not reused
    ends_sent = 0  # END_OF_RUN bytes stop() wrote
    ends_seen = 0  # END_OF_RUN bytes the watcher read: equal to ends_sent, the bytes are the running code's


END_OF_RUN = b"\0"
"""Written by :func:`stop` after the wakeup fd is no longer ours: what the watcher reads before it
was the ended code's."""


def note_handled() -> None:
    """The code's SIGINT handler ran (called first thing in it, on the main thread; takes no lock:
    the main thread may hold one when a handler runs)."""
    _Watch.handled += 1


def start() -> object:
    """Watch for a missed SIGINT while the model's code runs (main thread, before its handler is
    installed). Returns the token for :func:`stop`: ``None`` when nothing was started (already
    watching: nested code; not the main thread; no such signals; the wake signal taken by others)."""
    if _Watch.active is not None or not _usable():
        return None
    try:
        _ensure_thread()
    except (OSError, RuntimeError):  # no socket or thread to spare: the code runs, unwatched
        return None
    writer = _Watch.writer
    assert writer is not None
    token = object()
    with _Watch.lock:
        _Watch.received = _Watch.handled = _Watch.woken_for = 0
        _Watch.deadline = None
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter
            return None
        # Ours already, no code watched: a ■ raised out of a start or stop between its wakeup-fd
        # change and the rest (outside a kernel); the one before is still the one remembered.
        _Watch.forward = _Watch.forward if previous == writer.fileno() else previous
        _Watch.active = token
    return token


def stop(token: object) -> None:
    """The code :func:`start` returned ``token`` for has ended: no wake after this returns, and the
    wakeup fd is the one before (unless the code set its own meanwhile: that one stays)."""
    if token is None or _Watch.active is not token or threading.current_thread() is not threading.main_thread():
        return
    # Before the lock: a handler that raises while this waits for it (a ■ landing now, outside a
    # kernel) must not leave the ended code watched, every later start a no-op.
    _Watch.active = None
    _restore_wakeup_fd()
    with _Watch.lock:  # a wake the watcher is sending (it sends holding the lock) has gone out
        _Watch.deadline = None
        _end_of_run()


def _restore_wakeup_fd() -> None:
    """The wakeup fd before ours again (unless the code set its own meanwhile: that one stays)."""
    ours = _Watch.writer.fileno() if _Watch.writer is not None else -1
    try:
        current = signal.set_wakeup_fd(_Watch.forward)
    except (ValueError, OSError):  # the one before was closed meanwhile
        current = signal.set_wakeup_fd(-1)
    if current != ours:
        signal.set_wakeup_fd(current)


def _end_of_run() -> None:
    """Mark the ended code's end in the stream (holding the lock; Python writes no byte 0): a SIGINT
    byte of it that the watcher has not read yet must not count for the code started next, which
    no ■ reached (it would get a wake, an EINTR, 0.5 s in)."""
    if _Watch.writer is None:
        return
    # Counted before it is sent: outside a kernel a ■ landing here raises (stop() runs with the
    # previous handler back) as the send returns, and a byte sent but never counted left the
    # watcher one end ahead for good: no SIGINT counted again, no missed ■ woken in this process.
    _Watch.ends_sent += 1
    try:
        _Watch.writer.send(END_OF_RUN)
    except OSError:  # full: the watcher is gone or stuck, and counts nothing anyway
        _Watch.ends_sent -= 1


def watching() -> object:
    """The token of the code watched now (``None``: none), for an end that lost its own."""
    return _Watch.active


def _usable() -> bool:
    if WAKE_SIGNAL is None or not hasattr(signal, "pthread_kill"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(WAKE_SIGNAL)
    if handler is _woken:
        return True
    if handler != signal.SIG_DFL:  # someone's own use of it: their handler must not run for ours
        return False
    # Left installed: a wake that comes as the code ends then still finds it (Python would print
    # "Signal … ignored due to race condition" for a handler gone), and it does nothing.
    try:
        signal.signal(WAKE_SIGNAL, _woken)
    except ValueError:  # not the main interpreter
        return False
    return True


def _woken(signum: int, frame: FrameType | None) -> None:
    """The wake signal's handler: nothing; the EINTR its delivery gave was the point."""


def _ensure_thread() -> None:
    if _Watch.thread is not None and _Watch.thread.is_alive():
        return
    # Sockets of a watcher gone (a forked child's) stay open: the writer's fd may still be the
    # wakeup fd, which must not become someone else's file.
    _Watch.retired += [s for s in (_Watch.reader, _Watch.writer) if s is not None]
    _Watch.reader, _Watch.writer = socket.socketpair()
    _Watch.ends_sent = _Watch.ends_seen = 0  # a new stream: no end of the old one will be read
    _Watch.writer.setblocking(False)  # set_wakeup_fd's rule: a signal handler must never block
    thread = threading.Thread(target=_watch, args=(_Watch.reader,), name="nbagent-sigint-watch", daemon=True)
    with sigint_kept_from_new_threads():  # a ■ it took would be one more that misses the main thread
        thread.start()
    _Watch.thread = thread


def _watch(reader: socket.socket) -> None:
    """The watcher's loop: blocked in ``recv`` until a signal's byte comes, or the wake is due."""
    while True:
        with _Watch.lock:
            deadline = _Watch.deadline
        reader.settimeout(None if deadline is None else max(deadline - time.monotonic(), 0.001))
        try:
            data = reader.recv(512)
            if not data:  # the writer closed: nothing to watch
                return
            _received(data)
        except (TimeoutError, BlockingIOError):  # the wake is due
            pass
        except OSError:  # closed (a forked child's copy)
            return
        _wake_if_due()


def _received(data: bytes) -> None:
    with _Watch.lock:
        # Never more ends than were counted (a byte cannot be read before it is sent): a count that
        # went missing anyway heals here rather than stopping every later count.
        _Watch.ends_seen = min(_Watch.ends_seen + data.count(END_OF_RUN), _Watch.ends_sent)
        signals = data.replace(END_OF_RUN, b"")
        if _Watch.forward != -1 and signals:
            try:
                os.write(_Watch.forward, signals)
            except OSError:  # full or closed: the owner's own loss, as without us
                pass
        # Only what came after the last end, and only if no end is still unread: the code running now.
        count = data.rpartition(END_OF_RUN)[2].count(signal.SIGINT)
        if count and _Watch.active is not None and _Watch.ends_seen == _Watch.ends_sent:
            _Watch.received += count
            if _Watch.deadline is None:
                _Watch.deadline = time.monotonic() + GRACE_S


def _wake_if_due() -> None:
    with _Watch.lock:
        if _Watch.deadline is None or time.monotonic() < _Watch.deadline:
            return
        _Watch.deadline = None
        # More SIGINTs than handler runs: one is pending. Counting, not comparing snapshots: the
        # handler often runs before this thread reads the byte (two presses that Python coalesced
        # into one run only cost a needless wake).
        if _Watch.active is None or _Watch.received <= max(_Watch.handled, _Watch.woken_for):
            return
        _Watch.woken_for = _Watch.received
        main = threading.main_thread().ident
        if main is not None and WAKE_SIGNAL is not None:
            signal.pthread_kill(main, WAKE_SIGNAL)  # under the lock: stop() then waits for it


def _forget_in_child() -> None:
    """A forked child has no watcher thread, and watches nothing; a later start there makes its own
    (the parent's socket is shared with it). The lock may have been the parent watcher's at the fork.
    Its wakeup fd is the one before ours again: the parent's socket is shared, and a SIGINT of the
    child's (multiprocessing's workers get the ■ too) would count as one the parent's code missed."""
    watched = _Watch.active is not None
    _Watch.thread, _Watch.active, _Watch.lock = None, None, threading.Lock()
    if watched:
        try:
            _restore_wakeup_fd()
        except ValueError:  # forked from another thread than the main one: not ours to set there
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


__all__ = ["GRACE_S", "WAKE_SIGNAL", "note_handled", "sigint_kept_from_new_threads", "start", "stop", "watching"]
