"""Decisions resolved from any thread, the interruptible wait, the button registry."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from nbagent.notebook import waiting
from nbagent.notebook.waiting import Decision, WaitAborted, wait_for_decision

CLICK = {"method": "custom", "content": {"event": "click"}}


async def test_resolve_once_and_await() -> None:
    d: Decision[str] = Decision()
    assert not d.resolved
    assert d.resolve("a") is True
    assert d.resolve("b") is False
    assert d.value == "a"
    assert await wait_for_decision(d) == "a"


def test_value_before_decision_raises() -> None:
    with pytest.raises(LookupError):
        Decision().value  # noqa: B018


async def test_resolve_from_another_thread_wakes_the_loop_quickly() -> None:
    d: Decision[int] = Decision()
    t = threading.Timer(0.05, lambda: d.resolve(7))
    t.start()
    start = time.monotonic()
    assert await wait_for_decision(d, tick=5.0) == 7  # woken by call_soon_threadsafe, not the tick
    assert time.monotonic() - start < 3.0  # not the 5 s tick; room for a loaded CI machine
    t.join()


async def test_concurrent_resolvers_only_one_wins() -> None:
    d: Decision[int] = Decision()
    wins: list[bool] = []
    threads = [threading.Thread(target=lambda i=i: wins.append(d.resolve(i))) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins.count(True) == 1
    assert await wait_for_decision(d) == d.value


def test_decision_made_without_a_loop_then_awaited() -> None:
    d: Decision[str] = Decision()  # no running loop here
    d.resolve("later")
    assert asyncio.run(wait_for_decision(d)) == "later"
    assert d.wait_sync(0) is True


async def test_abort_event_raises_wait_aborted() -> None:
    abort = asyncio.Event()
    d: Decision[str] = Decision()
    asyncio.get_running_loop().call_later(0.05, abort.set)
    with pytest.raises(WaitAborted):
        await wait_for_decision(d, abort=abort, tick=0.01)


async def test_a_prompt_no_longer_shown_raises_wait_unseen_and_a_click_during_the_check_still_wins() -> None:
    checks: list[bool] = []

    async def gone() -> bool:
        checks.append(False)
        return False

    with pytest.raises(waiting.WaitUnseen):
        await wait_for_decision(Decision[str](), tick=0.01, shown=gone, shown_every=0.02)
    clicked: Decision[str] = Decision()

    async def clicked_while_asked() -> bool:
        clicked.resolve("allow")  # the answer arrives while the front-end is being asked
        return False

    assert await wait_for_decision(clicked, tick=0.01, shown=clicked_while_asked, shown_every=0.02) == "allow"
    assert checks == [False]


async def test_cancellation_propagates_and_cleans_up() -> None:
    d: Decision[str] = Decision()
    waiting.register_button("btn-cancel", d, "x")
    task = asyncio.create_task(wait_for_decision(d, tick=0.01))
    await asyncio.sleep(0.03)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "btn-cancel" not in waiting.pending_buttons()
    assert d.resolve("late click is harmless") is True


async def test_register_and_resolve_by_button() -> None:
    d: Decision[str] = Decision()
    waiting.register_button("b-yes", d, "yes")
    waiting.register_button("b-no", d, "no")
    assert waiting.resolve_by_button("unknown") is False
    assert waiting.resolve_by_button("b-no") is True
    assert waiting.resolve_by_button("b-yes") is False
    assert await wait_for_decision(d) == "no"
    assert "b-yes" not in waiting.pending_buttons()


def test_handle_comm_msg_tracks_text_then_resolves_with_factory() -> None:
    d: Decision[str] = Decision()
    waiting.register_text("txt")
    waiting.register_button("deny", d, lambda: f"deny:{waiting.observed_text('txt')}", factory=True)
    assert waiting.handle_comm_msg("txt", {"method": "update", "state": {"value": "too risky"}, "buffer_paths": []}) is False
    assert waiting.observed_text("txt") == "too risky"
    assert waiting.handle_comm_msg("deny", {"method": "custom", "content": {"event": "other"}}) is False
    assert waiting.handle_comm_msg("deny", CLICK) is True
    assert d.value == "deny:too risky"
    waiting.unregister_text("txt")
    waiting.unregister_decision(d)
    assert waiting.observed_text("txt") is None


def test_is_click_shapes() -> None:
    assert waiting.is_click(CLICK)
    assert not waiting.is_click({"method": "custom", "content": "click"})
    assert not waiting.is_click(None)
    assert waiting.handle_comm_msg(None, CLICK) is False


def test_a_click_after_the_waiting_loop_closed_is_harmless(caplog: pytest.LogCaptureFixture) -> None:
    d: Decision[str] = Decision()

    async def give_up() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(wait_for_decision(d, tick=0.01), 0.05)

    asyncio.run(give_up())  # the loop that waited is closed now
    t = threading.Thread(target=lambda: d.resolve("late"))
    t.start()
    t.join()
    assert d.value == "late" and d.wait_sync(0)
    assert "exception calling callback" not in caplog.text


def test_a_click_that_arrives_before_its_button_is_registered_still_decides() -> None:
    # The front-end sees a button as soon as the widget is built; on a busy kernel the click can
    # reach the fast path before register_button runs (seen as a lost click on the fallback path).
    decision: waiting.Decision[str] = waiting.Decision()
    assert waiting.handle_comm_msg("early-button", {"method": "custom", "content": {"event": "click"}}) is False
    waiting.register_button("early-button", decision, "allow")
    assert decision.resolved and decision.value == "allow"
    waiting.unregister_decision(decision)
