"""``%agent serve --stop`` ends every call: one allowed always that was between its checks when
the user stopped is refused too, and a stop at the kernel's exit (the loop already closed) still
stops (the review of power pass 2, L2)."""

from __future__ import annotations

import asyncio

import pytest

from nbagent.notebook.serve.gate import STOPPED, CallRefused, Request, ServeGate

from .test_serve_grants import AnsweringPanel


async def test_a_call_allowed_always_is_refused_when_the_server_stopped_during_its_checks() -> None:
    gate: ServeGate

    async def alive() -> bool:  # the page's round trip, during which the user runs --stop
        gate.stop()
        return True

    gate = ServeGate(AnsweringPanel(), lambda: "default", alive, lambda _tool: True)
    request = Request("claude-code", "run_code", "run code", key=("claude-code", "s1"))
    gate._always[(request.key, request.tool)] = "claude-code"  # the user allowed it always, earlier
    with pytest.raises(CallRefused) as refused:
        await gate.check(request)
    assert str(refused.value) == STOPPED


def test_stop_still_stops_when_a_waiting_calls_loop_is_closed() -> None:
    gate = ServeGate(AnsweringPanel(), lambda: "default", lambda: asyncio.sleep(0, True), lambda _tool: True)
    loop = asyncio.new_event_loop()
    waiter: asyncio.Future[object] = loop.create_future()
    loop.close()  # the kernel exits with a card still waiting
    gate._waiting.add(waiter)  # type: ignore[arg-type]
    assert gate.stop() == 1
    assert gate.stopped and waiter.cancelled()
