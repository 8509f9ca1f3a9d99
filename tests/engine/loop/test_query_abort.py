"""Abort (issue 4, test 4): at 20 seeded random moments — while a paced stream arrives, while a
slow tool runs, while a retry waits — ``abort.set()`` ends the loop with ``Done("aborted")`` within
one second, the history stays valid on disk, and ``QueryEngine.resume`` carries on. A kernel
interrupt (a plain ``CancelledError``) propagates after the history is repaired."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from nbagent.engine.contracts.events import Done, TextDelta, ToolResult
from nbagent.engine.contracts.messages import tool_uses
from nbagent.engine.contracts.permissions import Allow
from nbagent.engine.loop.query import QueryEngine
from nbagent.engine.loop.tool_runner import INTERRUPTED, NOT_RUN
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop._blocks import tool_results
from tests.engine.loop.test_query_support import (
    BlockingSleep,
    Echo,
    Slow,
    Write,
    assert_history_valid,
    assert_persisted_valid,
    done_of,
    make_engine,
    messages_requests,
    run,
)

pytestmark = pytest.mark.usefixtures("no_jitter")  # these check the exact retry schedule

LONG = " ".join(f"w{i}" for i in range(900))  # ~1,800 tokens: several seconds at 500 tokens/s
LEAD = " ".join(f"lead{i}" for i in range(40))
CATEGORIES = ("stream", "tool", "retry_wait")


def case(category: str, tmp_path: Any, name: str) -> tuple[QueryEngine, SimulatedAPI, Any]:
    if category == "stream":
        api = SimulatedAPI([tool_reply("echo", {"text": "quick"}, text=LEAD), text_reply(LONG)], tokens_per_second=500)
        return make_engine(api, tmp_path, tools=[Echo()], task=name), api, None
    if category == "tool":
        slow = Slow()
        api = SimulatedAPI([tool_reply("slow", {"seconds": 30}, text=LEAD), text_reply("never")], tokens_per_second=2_000)
        return make_engine(api, tmp_path, tools=[slow], task=name), api, slow
    sleep = BlockingSleep()
    api = SimulatedAPI([text_reply("never")], faults={1: Fault.overloaded()})
    return make_engine(api, tmp_path, sleep=sleep, task=name), api, sleep


async def abort_after(engine: QueryEngine, delay: float) -> tuple[list, float]:
    events: list = []

    async def consume() -> None:
        async for e in engine.submit_message("start"):
            events.append(e)

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(delay)
    assert not task.done(), "the session ended before the abort"
    t0 = time.monotonic()
    engine.abort()
    await asyncio.wait_for(task, 5)
    return events, time.monotonic() - t0


async def resume_and_continue(engine: QueryEngine, tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply("Resumed and done.")])
    engine.session.close()
    assert engine.config.task_dir is not None
    resumed = make_engine(api, tmp_path, tools=[Echo()], task=engine.config.task_dir.name, resume=True)
    assert resumed.session.history == engine.session.history
    ev = await run(resumed, "carry on")
    assert done_of(ev).reason == "end_turn"
    assert_history_valid(resumed.session.history)
    assert_persisted_valid(resumed.config.task_dir, resumed)
    # What the resumed session sent is a valid conversation that starts with the old one.
    sent = messages_requests(api)[0].body["messages"]
    assert len(sent) == len(engine.session.history) + (engine.session.history[-1]["role"] == "assistant")


SEEDED = [(CATEGORIES[i % 3], random.Random(i).uniform(0.02, 0.35)) for i in range(20)]


@pytest.mark.parametrize("category, delay", SEEDED, ids=[f"{c}-{d:.3f}s" for c, d in SEEDED])
async def test_abort_at_a_random_moment(tmp_path: Any, category: str, delay: float) -> None:
    engine, api, probe = case(category, tmp_path, "task")
    events, took = await abort_after(engine, delay)
    done = done_of(events)
    assert done.reason == "aborted", [e.kind for e in events]
    assert took < 2.5  # the stream left runs ~3 s, the tool 30 s; room for a loaded CI machine
    assert sum(isinstance(e, Done) for e in events) == 1
    assert_history_valid(engine.session.history)
    assert_persisted_valid(engine.config.task_dir, engine)
    if category == "tool" and probe.started.is_set():
        assert probe.cancelled == 1 and probe.finished == 0
        results = [e for e in events if isinstance(e, ToolResult)]
        answer = tool_results(engine.session.history[-1])[0]
        assert answer["is_error"] and answer["content"] in (INTERRUPTED, NOT_RUN)
        assert results == []  # an interrupted call shows no result row; the model is told in history
    if category == "retry_wait":
        assert probe.delays == [2.0]  # it was waiting for the first retry
        assert len(messages_requests(api)) == 1
    await resume_and_continue(engine, tmp_path)


async def test_abort_from_the_consumer_at_a_yield_stops_before_the_next_chunk(tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply(LONG)])
    engine = make_engine(api, tmp_path)
    events = []
    async for e in engine.submit_message("go"):
        events.append(e)
        if isinstance(e, TextDelta):
            engine.abort()
    assert [e.kind for e in events] == ["api_request_started", "text_delta", "done"]
    assert done_of(events).reason == "aborted"
    # Nothing of the broken reply entered history; the unanswered prompt stays its own turn.
    assert engine.session.history == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "[No reply: the run was stopped before the model "
                                                                  "answered]"}]}]
    assert_persisted_valid(engine.config.task_dir, engine)
    await resume_and_continue(engine, tmp_path)


async def test_abort_while_the_user_is_asked_for_permission(tmp_path: Any) -> None:
    asked = asyncio.Event()
    write = Write()

    async def never_answers(name: str, tool_input: dict, request: Any) -> Allow:
        asked.set()
        await asyncio.Event().wait()
        return Allow()

    api = SimulatedAPI([tool_reply("write", {"path": "a", "text": "b"})])
    engine = make_engine(api, tmp_path, tools=[write], can_use_tool=never_answers)
    task = asyncio.ensure_future(run(engine, "write it"))
    await asyncio.wait_for(asked.wait(), 5)
    t0 = time.monotonic()
    engine.abort()
    events = await asyncio.wait_for(task, 5)
    assert time.monotonic() - t0 < 3.0  # room for a loaded CI machine (the permission never comes)
    assert done_of(events).reason == "aborted" and write.calls == []
    last = tool_results(engine.session.history[-1])
    assert [(b["tool_use_id"], b["content"], b["is_error"]) for b in last] == [
        (tool_uses(engine.session.history[-2])[0]["id"], NOT_RUN, True)]
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_retry_now_cuts_the_wait_short(tmp_path: Any) -> None:
    sleep = BlockingSleep()
    api = SimulatedAPI([text_reply("after the wait")], faults={1: Fault.rate_limit(retry_after=30)})
    engine = make_engine(api, tmp_path, sleep=sleep)
    task = asyncio.ensure_future(run(engine, "go"))
    await asyncio.wait_for(sleep.started.wait(), 5)
    engine.retry_now()
    events = await asyncio.wait_for(task, 5)
    assert sleep.delays == [30.0]
    assert done_of(events).reason == "end_turn"


async def test_a_kernel_interrupt_propagates_after_the_history_is_repaired(tmp_path: Any) -> None:
    slow = Slow()
    api = SimulatedAPI([tool_reply([("echo", {"text": "x"}), ("slow", {"seconds": 30}), ("echo", {"text": "y"})])])
    engine = make_engine(api, tmp_path, tools=[Echo(), slow])
    events: list = []

    async def consume() -> None:
        async for e in engine.submit_message("go"):
            events.append(e)

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(slow.started.wait(), 5)
    task.cancel()  # what the kernel's interrupt does to the cell's task
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled == 1
    assert not any(isinstance(e, Done) for e in events)
    results = tool_results(engine.session.history[-1])
    assert [b["content"] for b in results] == ["x", INTERRUPTED, NOT_RUN]
    assert_history_valid(engine.session.history)
    assert_persisted_valid(engine.config.task_dir, engine)
    await resume_and_continue(engine, tmp_path)


async def test_closing_the_event_stream_early_still_answers_every_tool_call(tmp_path: Any) -> None:
    api = SimulatedAPI([tool_reply("echo", {"text": "x"})])
    engine = make_engine(api, tmp_path, tools=[Echo()])
    gen = engine.submit_message("go")
    async for e in gen:
        if e.kind == "request_completed":
            break  # the consumer stops listening right after the tool call arrived
    assert isinstance(gen, AsyncGenerator)  # submit_message is an async generator function
    await gen.aclose()
    assert_history_valid(engine.session.history)
    assert tool_results(engine.session.history[-1])[0]["content"] == NOT_RUN
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_abort_when_a_tool_call_is_shown_answers_it_not_run_on_the_rules_path(tmp_path: Any) -> None:
    """A read-only call is allowed by the rules alone (no permit step to check for an abort): an
    abort pressed on seeing it must still say "not run", never "interrupted while running"."""
    api = SimulatedAPI([tool_reply("echo", {"text": "x"}), text_reply("never")])
    engine = make_engine(api, tmp_path)
    events = []
    async for e in engine.submit_message("go"):
        events.append(e)
        if e.kind == "tool_use":
            engine.abort()
    assert done_of(events).reason == "aborted"
    results = tool_results(engine.session.history[-1])
    assert [b["content"] for b in results] == [NOT_RUN]
    assert_persisted_valid(engine.config.task_dir, engine)
