"""Run work on the kernel's main thread from the server's thread.

The mechanism (measured on ipykernel 7.4, see docs/mcp.md "How a call reaches the kernel"): the
kernel's main thread runs an asyncio loop, and that loop is running whenever the kernel is idle
between cells. A tool call arrives on the server's thread; it hands a coroutine to the kernel's
loop with ``asyncio.run_coroutine_threadsafe`` and awaits the result on its own loop. So:

- user code runs only on the main thread, where a cell would run it (``shell.user_ns``, the
  kernel's signal handlers for interrupts, matplotlib's backend);
- widgets (the Allow / Deny card) are made and changed on the main thread, and their clicks come
  back as ``comm_msg`` the idle kernel handles on that loop (or the fast path resolves them on the
  shell-channel thread, :mod:`nbagent.notebook.waiting`);
- bridge requests await their replies on that loop as a cell's would;
- while a cell runs, the call waits its turn like a queued cell (the loop is busy), then runs.

Cancelling the server-side await (the client went away) cancels the coroutine on the kernel's loop.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")


class KernelLoop:
    """The kernel's main asyncio loop, captured on the main thread by ``%agent serve``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    @classmethod
    def capture(cls) -> "KernelLoop":
        """The loop running the current cell (ipykernel 7 runs every cell on its asyncio loop)."""
        try:
            return cls(asyncio.get_running_loop())
        except RuntimeError:
            raise RuntimeError("%agent serve needs a running kernel loop (an IPython kernel, ipykernel 7 or "
                               "later); it cannot serve from a plain IPython terminal.") from None

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work()`` on the kernel's loop and await its result from another loop."""
        if self.loop.is_closed():
            raise RuntimeError("the kernel's loop is closed (the kernel is shutting down)")
        future = asyncio.run_coroutine_threadsafe(_call(work), self.loop)
        return await asyncio.wrap_future(future)


async def _call(work: Callable[[], Awaitable[T]]) -> T:
    return await work()
