"""The interrupt's abort registry: every registered run is aborted, from any thread."""

from __future__ import annotations

import asyncio
import threading

from nbagent.notebook import aborts


async def test_abort_registry_sets_events_thread_safely() -> None:
    ev = asyncio.Event()
    called: list[int] = []
    with aborts.abort_scope(ev), aborts.abort_scope(lambda: called.append(1)):
        t = threading.Thread(target=aborts.trigger_aborts)
        t.start()
        t.join()
        await asyncio.wait_for(ev.wait(), 1.0)
        assert called == [1]
    assert aborts.trigger_aborts() == 0 or all(
        target is not ev for target, _ in aborts.ACTIVE_ABORTS.values()
    )


def test_broken_abort_target_does_not_stop_the_others() -> None:
    hits: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    t1 = aborts.register_abort(broken)
    t2 = aborts.register_abort(lambda: hits.append("ok"))
    try:
        assert aborts.trigger_aborts() >= 2
        assert hits == ["ok"]
    finally:
        aborts.unregister_abort(t1)
        aborts.unregister_abort(t2)
