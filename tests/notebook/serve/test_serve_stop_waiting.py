"""``%agent serve --stop`` while a client's call waits for a click: the call is refused at once and
its card settled; it neither hangs the client (until the card's 300 s timeout) nor runs when the
card's Allow is clicked after the stop."""

from __future__ import annotations

import asyncio

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel


async def test_stop_refuses_a_call_waiting_for_a_click_and_a_later_allow_runs_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    served = Served(tmp_path)
    try:
        async with served.client("waiter") as client:
            call = asyncio.ensure_future(client.call_tool("run_code", {"code": "STOPPED_RAN = True"}))
            button = None
            while button is None and not call.done():
                button = await asyncio.to_thread(served.fresh_button, "Allow")
            assert button is not None
            assert "stopped serving" in served.run("%agent serve --stop")
            refused = await asyncio.wait_for(call, 10)  # on main: no answer until the card's timeout
            assert refused.is_error and "stopped the server" in text(refused), text(refused)
            await asyncio.to_thread(served.d.click, button)  # the stale card's Allow, as a front-end sends it
        assert "NameError" in served.run("STOPPED_RAN")
        assert "the server stopped" in served.html()
    finally:
        served.close()
