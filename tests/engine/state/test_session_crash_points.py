"""A folder left between two writes (a killed process), or written by an earlier version, resumes
to a valid history; a resumed session appends to its logs instead of rewriting them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.disk.append_log import AppendLog, read_log
from nbagent.engine.disk.persist import dumps_line
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import COMPACTIONS_FILE, HISTORY_FILE, MARKS_FILE, REQUESTS_FILE, SESSION_FILE, UI_FILE
from tests.engine.loop.test_query_support import make_engine, run
from tests.engine.state.test_session_writes import four_calls_then_answer


async def three_turns_and_a_compaction(tmp_path: Path) -> tuple[Any, list[dict[str, Any]]]:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    for i in range(3):
        await run(engine, f"turn {i}")
    before = json.loads(json.dumps(engine.session.history))
    async for _ in engine.compact():
        pass
    assert len(engine.session.compactions) == 1
    return engine, before


def to_earlier_layout(task: Path) -> None:
    """The folder as the version before the request and compaction logs wrote it."""
    meta = json.loads((task / SESSION_FILE).read_text(encoding="utf-8"))
    meta.pop("records_len")
    meta["records"] = json.loads((task / REQUESTS_FILE).read_text(encoding="utf-8"))
    meta["compactions"] = json.loads((task / COMPACTIONS_FILE).read_text(encoding="utf-8"))
    meta["marks"] = json.loads((task / MARKS_FILE).read_text(encoding="utf-8"))
    (task / SESSION_FILE).write_text(json.dumps(meta), encoding="utf-8")
    for name in (REQUESTS_FILE, COMPACTIONS_FILE, MARKS_FILE):
        (task / name).unlink()


async def test_a_folder_of_the_earlier_layout_keeps_records_and_compactions_after_a_failed_turn(
        tmp_path: Path) -> None:
    engine, _ = await three_turns_and_a_compaction(tmp_path)
    records = len(engine.session.records)
    engine.session.close()
    task = tmp_path / "task"
    to_earlier_layout(task)
    s = Session.load(task)
    turn = s.begin_turn([{"type": "text", "text": "hello"}])
    s.close_unanswered("the request failed")
    s.end_turn(turn)
    s.save_events()
    s.close()
    again = Session.load(task)
    assert (len(again.records), len(again.compactions)) == (records, 1)
    again.rollback(2)
    assert history_problems(again.history) == []


async def test_a_folder_of_the_earlier_layout_rolls_back_across_its_compaction_after_a_new_turn(
        tmp_path: Path) -> None:
    engine, _ = await three_turns_and_a_compaction(tmp_path)
    engine.session.close()
    task = tmp_path / "task"
    to_earlier_layout(task)
    resumed = make_engine(four_calls_then_answer(), tmp_path, resume=True)
    await run(resumed, "one more")
    resumed.session.close()
    again = Session.load(task)
    assert len(again.compactions) == 1
    again.rollback(2)
    assert history_problems(again.history) == []


async def test_killed_after_writing_a_compaction_point_but_not_the_history_the_point_is_dropped(
        tmp_path: Path) -> None:
    engine, before = await three_turns_and_a_compaction(tmp_path)
    engine.session.close()
    task = tmp_path / "task"
    (task / HISTORY_FILE).write_text(json.dumps(before), encoding="utf-8")  # the history not yet compacted
    s = Session.load(task)
    assert s.compactions == [] and s.history == before
    s.rollback(1)
    assert history_problems(s.history) == []


async def test_killed_in_a_rollback_after_restoring_the_history_the_used_point_is_not_applied_again(
        tmp_path: Path) -> None:
    engine, before = await three_turns_and_a_compaction(tmp_path)
    await run(engine, "after the compaction")
    engine.session.close()
    task = tmp_path / "task"
    points = (task / COMPACTIONS_FILE).read_bytes()
    s = Session.load(task)
    s.rollback(3)  # across the compaction: the history is restored, the point used up
    restored = list(s.history)
    s.close()
    (task / COMPACTIONS_FILE).write_bytes(points)  # killed before the point was dropped
    again = Session.load(task)
    assert again.compactions == [] and again.history == restored
    again.rollback(1)
    assert history_problems(again.history) == []


async def test_a_resumed_session_appends_to_its_logs_instead_of_rewriting_them(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "first")
    engine.session.close()
    task = tmp_path / "task"
    inodes = {name: (task / name).stat().st_ino for name in (HISTORY_FILE, REQUESTS_FILE, UI_FILE)}
    resumed = make_engine(four_calls_then_answer(), tmp_path, resume=True)
    await run(resumed, "second")
    assert {name: (task / name).stat().st_ino for name in inodes} == inodes
    resumed.session.close()
    assert Session.load(task).history == resumed.session.history


@pytest.mark.parametrize("old, new", [(1, 3), (2, 4), (3, 4)])
def test_a_log_cut_at_any_byte_of_an_append_loads_what_was_whole(tmp_path: Path, old: int, new: int) -> None:
    items = [{"role": "user", "content": f"message {i}"} for i in range(new)]
    path = tmp_path / "log.json"
    log = AppendLog(path)
    log.save(items[:old], dumps_line)
    before = path.read_bytes()
    log.save(items, dumps_line)
    after = path.read_bytes()
    for cut in range(len(before) - 2, len(after)):
        path.write_bytes(after[:cut])
        got = read_log(path, [])
        assert isinstance(got, list) and got == items[:len(got)] and len(got) >= old, (cut, after[:cut][-20:])
    path.write_bytes(before[:-2] + b",]")  # only the append's first byte written
    assert read_log(path, []) == items[:old]


def test_an_empty_log_is_not_rewritten_on_every_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbagent.engine.disk.append_log as append_log

    path = tmp_path / "log.json"
    log = AppendLog(path)
    log.save([{"a": 1}], dumps_line)
    log.save([], dumps_line)  # emptied (a rollback used every point up): rewritten once
    assert json.loads(path.read_text(encoding="utf-8")) == []
    writes: list[Any] = []
    monkeypatch.setattr(append_log, "atomic_write_text", lambda *a: writes.append(a))
    log.save([], dumps_line)
    assert writes == []
