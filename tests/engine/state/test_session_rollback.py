"""Rollback (issue 4, test 9): returning to the end of a turn restores the history, the deleted
range, the records and what the model saw — compared with the request the simulated API recorded
for that turn — and a re-run of the next turn sends exactly what it sent the first time."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.messages import text_of
from nbagent.engine.loop.rollback import rollback
from nbagent.engine.state.store import SessionStore
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import (
    assert_history_valid,
    assert_persisted_valid,
    done_of,
    make_engine,
    messages_requests,
    run,
)

WORDS = " ".join(f"word{i}" for i in range(40))
CWD = Path("/nbagent-test-cwd")  # a fixed path keeps the system prompt's size the same on every machine


def turn_script(t: int) -> list[Any]:
    return [tool_reply("echo", {"text": WORDS}, id=f"toolu_t{t}"), text_reply(f"done {t}")]


def without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def without_ts(updates_json: list) -> list:
    """``ContextHistoryUpdates.to_json()`` with each update's timestamp zeroed."""
    return [[m, [edit, [[b, [[0, *u[1:]] for u in ups]] for b, ups in blocks]]] for m, (edit, blocks) in updates_json]


def seen_after(engine: Any) -> list[dict]:
    """What the model would be shown now (before any new truncation)."""
    return engine.session.context.get_truncated_messages(engine.session.history, engine.session.deleted_range)


async def three_turns(tmp_path: Path, api: SimulatedAPI) -> tuple[Any, list[dict]]:
    # A 2,000-token window allows 1,600 tokens: turns 1 and 2 stay below, turn 3's requests
    # truncate (its first request hides 2-3, its second 2-5), adding the truncation notice.
    engine = make_engine(api, tmp_path, context_window=2_000, custom_system_prompt="x " * 1_050, cwd=CWD)
    snaps = []
    for t in (1, 2, 3):
        ev = await run(engine, f"task {t}")
        assert done_of(ev).reason == "end_turn"
        snaps.append(dict(history=copy.deepcopy(engine.session.history), range=engine.session.deleted_range,
                          records=list(engine.session.records), updates=engine.session.context.updates.to_json(),
                          events=[e.kind for e in ev]))
    totals = [r.usage.total_tokens for r in engine.session.records]
    assert max(totals[:3]) + 25 < 1_600 < totals[3] - 25, totals
    assert snaps[1]["range"] is None and snaps[1]["updates"] == []
    assert snaps[2]["range"] == (2, 5) and snaps[2]["updates"] != []
    return engine, snaps


async def test_rollback_restores_history_range_records_and_what_the_model_saw(tmp_path: Path) -> None:
    api = SimulatedAPI(turn_script(1) + turn_script(2) + turn_script(3) + turn_script(3))
    engine, snaps = await three_turns(tmp_path, api)
    requests = messages_requests(api)
    turn2_last = requests[3].body

    rollback(engine, 2)
    assert engine.session.history == snaps[1]["history"]
    assert engine.session.deleted_range is None
    assert engine.session.records == snaps[1]["records"] and engine.session.turn == 2
    assert engine.session.context.updates.to_json() == snaps[1]["updates"] == []
    # What the model saw at turn 2's last request, plus its reply: exactly what it would see now.
    assert seen_after(engine) == without_cache_control(turn2_last["messages"]) + [engine.session.history[-1]]
    assert_persisted_valid(engine.config.task_dir, engine)
    snap = SessionStore(engine.config.task_dir).load()
    assert [m.turn for m in snap.marks] == [1, 2]

    # Running turn 3 again sends what it sent the first time (truncation and notices included).
    ev = await run(engine, "task 3")
    assert done_of(ev).reason == "end_turn"
    again = messages_requests(api)
    assert [r.body for r in again[6:8]] == [r.body for r in requests[4:6]]
    assert engine.session.history == snaps[2]["history"] and engine.session.deleted_range == (2, 5)
    assert without_ts(engine.session.context.updates.to_json()) == without_ts(snaps[2]["updates"])


async def test_rollback_to_turn_one_and_to_zero(tmp_path: Path) -> None:
    api = SimulatedAPI(turn_script(1) + turn_script(2) + turn_script(3) + [text_reply("fresh")])
    engine, snaps = await three_turns(tmp_path, api)
    turn1_last = messages_requests(api)[1].body
    rollback(engine, 1)
    assert engine.session.history == snaps[0]["history"] and engine.session.records == snaps[0]["records"]
    assert seen_after(engine) == without_cache_control(turn1_last["messages"]) + [engine.session.history[-1]]
    assert_persisted_valid(engine.config.task_dir, engine)
    rollback(engine, 0)
    assert engine.session.history == [] and engine.session.records == [] and engine.session.turn == 0
    assert engine.session.context.updates.to_json() == []
    ev = await run(engine, "start over")
    assert done_of(ev).reason == "end_turn" and len(engine.session.history) == 2
    assert messages_requests(api)[-1].body["messages"][0]["content"][0]["text"] == "start over"
    with pytest.raises(ValueError, match="no turn 7"):
        rollback(engine, 7)


async def test_a_failed_prompt_stays_its_own_turn_and_rollback_restores_it(tmp_path: Path) -> None:
    # Turn 1 fails (401) before any reply: its prompt is closed by a marked "no reply" message,
    # so turn 2's prompt is a message of its own (never merged into the failed one).
    api = SimulatedAPI([text_reply("turn two answered")], faults={1: Fault.auth()})
    engine = make_engine(api, tmp_path)
    assert done_of(await run(engine, "first prompt")).reason == "error"
    after_turn_1 = copy.deepcopy(engine.session.history)
    assert [m["role"] for m in after_turn_1] == ["user", "assistant"]
    assert text_of(after_turn_1[1]).startswith("[No reply: the request failed")
    assert done_of(await run(engine, "second prompt")).reason == "end_turn"
    assert text_of(engine.session.history[0]) == "first prompt"
    assert text_of(engine.session.history[2]) == "second prompt"
    rollback(engine, 1)
    assert engine.session.history == after_turn_1
    assert_history_valid(engine.session.history)
    assert engine.config.task_dir is not None
    assert SessionStore(engine.config.task_dir).load().history == after_turn_1
