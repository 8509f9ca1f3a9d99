"""What the kernel's interrupt sets to abort every running agent.

Process-wide, because the kernel's interrupt handler (maybe a signal handler) must reach every
running agent without knowing which session or cell started it; see :mod:`.waiting` for why a cell
that awaits still needs this (a bare ``await`` cannot be interrupted, ipykernel #881).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Union

AbortTarget = Union[asyncio.Event, Callable[[], object]]

_abort_ids = itertools.count(1)
#: token → (target, loop of an asyncio.Event target or None). Read without a lock by
#: :func:`trigger_aborts`, which may run inside a signal handler on the thread that holds the lock.
ACTIVE_ABORTS: dict[int, tuple[AbortTarget, asyncio.AbstractEventLoop | None]] = {}
_abort_lock = threading.Lock()


def register_abort(target: AbortTarget) -> int:
    """Register an ``asyncio.Event`` (set on its loop) or a thread-safe callable; returns a token."""
    loop = None
    if isinstance(target, asyncio.Event):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
    token = next(_abort_ids)
    with _abort_lock:
        ACTIVE_ABORTS[token] = (target, loop)
    return token


def unregister_abort(token: int) -> None:
    """Forget a registration (unknown tokens are ignored)."""
    with _abort_lock:
        ACTIVE_ABORTS.pop(token, None)


@contextmanager
def abort_scope(target: AbortTarget) -> Iterator[int]:
    """Register ``target`` for the duration of a ``with`` block."""
    token = register_abort(target)
    try:
        yield token
    finally:
        unregister_abort(token)


def trigger_aborts() -> int:
    """Abort every registered run (safe from a signal handler or any thread); returns how many."""
    # A snapshot without the lock: a signal handler may interrupt the thread holding it.
    targets = list(ACTIVE_ABORTS.values())
    for target, loop in targets:
        try:
            if isinstance(target, asyncio.Event):
                if loop is not None and not loop.is_closed():
                    loop.call_soon_threadsafe(target.set)
                else:
                    target.set()
            else:
                target()
        except Exception:  # one broken target must not stop the others, nor the interrupt
            pass
    return len(targets)
