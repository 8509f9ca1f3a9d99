"""Run a coroutine to completion from synchronous code, even inside a running event loop.

The coroutine gets its own loop on a worker thread, and the calling thread waits with a 0.1 s tick
so that Ctrl-C / the kernel's interrupt reaches it. ``nest_asyncio`` is not used: a nested loop
cannot re-enter the ``Context`` that ipykernel 7's shell tasks share, and the kernel then stops
replying (measured).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")


def run_blocking(make: Callable[[], Awaitable[T]], *, on_interrupt: Callable[[], Any] | None = None,
                 name: str = "nbagent-worker", grace_s: float = 5.0) -> T:
    """Run ``make()`` on a private loop in a worker thread and return its result.

    On ``KeyboardInterrupt`` in the waiting thread, ``on_interrupt`` is called (it should abort the
    coroutine thread-safely), the worker gets ``grace_s`` seconds to finish, and the interrupt is
    re-raised. An exception in the coroutine is re-raised here.
    """
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as exc:  # handed to the calling thread
            box["error"] = exc

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        worker.join(grace_s)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
