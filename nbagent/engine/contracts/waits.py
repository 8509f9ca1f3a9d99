"""``within``: ``asyncio.wait_for`` that never loses the caller's cancellation.

Before Python 3.12, ``asyncio.wait_for`` returns the awaited result when it completes in the same
loop turn as a cancellation of the waiting task, and the cancellation is gone. That is how the
kernel delivers ■ to an async cell: its SIGINT handler schedules a callback, which cancels the
cell's task a turn later. An agent cell that was busy (importing, building its first request) when
■ came was first suspended in ``wait_for`` around tool sources that were ready at once: both landed
in one turn, and the whole run went on to the end as if ■ had not been pressed. ``asyncio.timeout``
(3.11) counts cancellations and lets the caller's through; on 3.10 the wait is an ``asyncio.wait``,
which never swallows one.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Awaitable, TypeVar

T = TypeVar("T")


async def within(aw: Awaitable[T], seconds: float | None) -> T:
    """Await ``aw`` for at most ``seconds`` (None: no limit), then cancel it and raise
    ``asyncio.TimeoutError``. A cancellation of the caller always propagates (see the module)."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await aw
    return await within_task(aw, seconds)  # pragma: no cover - Python 3.10


async def within_task(aw: Awaitable[T], seconds: float | None) -> T:
    """:func:`within`, with ``aw`` run as a task of its own (as ``wait_for`` runs it), waited for
    with ``asyncio.wait``: on Python 3.10 (no ``asyncio.timeout``), and for code whose own
    cancel scopes (anyio's) must not see the timeout's cancellation of the caller's task."""
    task = asyncio.ensure_future(aw)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        await _cancelled(task)  # as wait_for does: the task's cleanup has run when the caller goes on
        raise
    if task in done:
        return task.result()
    await _cancelled(task)
    raise asyncio.TimeoutError()


async def _cancelled(task: asyncio.Future[T]) -> None:
    """Cancel ``task`` and wait until it has ended."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: an error it raised while cancelled is not logged as unseen


__all__ = ["within", "within_task"]
