"""A consumer that stops reading a run part-way (``break``/``aclose()``): the session's event log
keeps exactly the events handed over, what was not handed over stays for later, and the turn begun
is closed (the next prompt is its own turn). Written for a refactor of the turn loop that was not
merged (it logged events before handing them over); they guard the loop as it is."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any, Callable

from nbagent.engine.contracts.events import Done, Event, Notice, RequestCompleted
from nbagent.engine.loop import query
from nbagent.engine.loop.query import QueryEngine
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import assert_history_valid, make_engine


async def read_until(engine: QueryEngine, prompt: str, last: Callable[[Event], bool]) -> list[Event]:
    """The events handed over until ``last`` holds for one; then the run is closed."""
    seen: list[Event] = []
    run = engine.submit_message(prompt)
    assert isinstance(run, AsyncGenerator)
    async with aclosing(run) as events:
        async for event in events:
            seen.append(event)
            if last(event):
                break
    return seen


def logged(engine: QueryEngine) -> list[str]:
    return [type(e).__name__ for e in engine.session.events]


def kept(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events if "Delta" not in type(e).__name__ and type(e).__name__ != "StreamStarted"]


async def test_stopping_at_request_completed_leaves_the_stop_notice_after_it_unlogged(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("a long answer " * 50, stop_reason="max_tokens")])
    engine = make_engine(api, tmp_path)
    seen = await read_until(engine, "hi", lambda e: isinstance(e, RequestCompleted))
    assert logged(engine) == kept(seen) == ["ApiRequestStarted", "RequestCompleted"]
    assert_history_valid(engine.session.history)


async def test_stopping_after_the_first_turn_notice_keeps_the_others_to_show_next_time(tmp_path: Path) -> None:
    engine = make_engine(SimulatedAPI([text_reply("ok")]), tmp_path)
    engine.session.notices.extend(["first", "second"])
    seen = await read_until(engine, "hi", lambda e: isinstance(e, Notice))
    assert [e.message for e in seen if isinstance(e, Notice)] == ["first"]
    assert logged(engine) == ["Notice"]
    assert engine.session.notices == ["first", "second"]


async def test_a_prompt_too_big_to_send_hands_its_done_over_before_the_event_log_is_saved(
        tmp_path: Path, monkeypatch: Any) -> None:
    engine = make_engine(SimulatedAPI([text_reply("never sent")]), tmp_path)
    handed: list[Event] = []
    saved_after: list[int] = []
    real_save = engine.session.save_events

    def save_events() -> None:
        saved_after.append(len(handed))
        real_save()

    monkeypatch.setattr(engine.session, "save_events", save_events)
    # As checked_prompt answers a prompt over the context window (a real one takes a long count).
    monkeypatch.setattr(query, "checked_prompt", lambda *args: ([], 0, "The prompt is too big to send."))
    async for event in engine.submit_message("hi"):
        handed.append(event)
    assert isinstance(handed[-1], Done) and handed[-1].reason == "error"
    assert saved_after == [len(handed)]  # the Done was handed over first (a consumer stopping at it saved nothing)
    assert logged(engine) == kept(handed)


async def test_stopping_during_the_turn_notices_closes_the_turn_so_the_next_prompt_is_its_own(tmp_path: Path) -> None:
    engine = make_engine(SimulatedAPI([text_reply("second answer")]), tmp_path)
    engine.session.notices.append("a notice")
    await read_until(engine, "first prompt", lambda e: isinstance(e, Notice))
    assert [m.turn for m in engine.session.marks] == [1]  # the abandoned turn has its end mark
    assert engine.session.notices == ["a notice"]  # not handed over: shown with the next prompt
    events = [e async for e in engine.submit_message("second prompt")]
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    first, *_ = engine.session.history
    assert "second prompt" not in str(first["content"])  # never merged into the abandoned prompt
    assert_history_valid(engine.session.history)
