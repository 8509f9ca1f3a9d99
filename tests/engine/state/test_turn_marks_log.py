"""Turn marks in their own append log (issue 34): a turn's end appends one line to
``turn_marks.json`` instead of rewriting ``session.json``, which is rewritten only when the model,
the range or the grants change. A folder written before (marks in ``session.json``, version 1)
loads as it was, is left byte for byte until its marks next change, and then moves them without
a moment where a process killed between two writes would lose them."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import nbagent.engine.state.store as store
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import MARKS_FILE, SESSION_FILE, SessionStore
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, run

# Written by main as it was before the marks log (three turns, tool calls, a truncation): marks in
# session.json, every other file as now.
MAIN_BEFORE = Path(__file__).parent / "fixtures" / "task_main_marks"


def copy_of_main_folder(tmp_path: Path) -> Path:
    task = tmp_path / "task"
    shutil.copytree(MAIN_BEFORE, task)
    return task


def meta(task: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((task / SESSION_FILE).read_text(encoding="utf-8"))
    return data


def logged_marks(task: Path) -> list[int]:
    return [m["turn"] for m in json.loads((task / MARKS_FILE).read_text(encoding="utf-8"))]


def test_a_folder_of_main_before_the_marks_log_loads_and_is_left_as_it_was(tmp_path: Path) -> None:
    task = copy_of_main_folder(tmp_path)
    before = {p.name: p.read_bytes() for p in task.iterdir()}
    snap = SessionStore(task).load()
    assert [m.turn for m in snap.marks] == [1, 2, 3] and snap.marks_in_meta and snap.notices == []
    assert len(snap.records) == 7 and len(snap.sent) == 7 and snap.deleted_range == (2, 3)
    assert snap.previous_usage == meta(task)["previous_usage"] and snap.last_ts == meta(task)["last_ts"]
    engine = make_engine(SimulatedAPI([]), tmp_path, resume=True)
    assert engine.session.turn == 3
    engine.session.close()
    assert {p.name: p.read_bytes() for p in task.iterdir() if p.name in before} == before
    assert not (task / MARKS_FILE).exists()


async def test_its_first_turn_moves_the_marks_to_their_log_and_rollback_still_works(tmp_path: Path) -> None:
    task = copy_of_main_folder(tmp_path)
    engine = make_engine(SimulatedAPI([text_reply("fourth answer")]), tmp_path, resume=True)
    await run(engine, "fourth task")
    engine.session.close()
    assert logged_marks(task) == [1, 2, 3, 4]
    assert "marks" not in meta(task) and meta(task)["version"] == 2
    again = Session.load(task)
    assert [m.turn for m in again.marks] == [1, 2, 3, 4] and again.notices == []
    mark = next(m for m in again.marks if m.turn == 2)
    again.rollback(2)
    assert len(again.history) == mark.history_len and len(again.records) == mark.records_len
    again.close()
    assert logged_marks(task) == [1, 2]
    assert [m.turn for m in Session.load(task).marks] == [1, 2]


async def test_a_stale_marks_log_beside_a_version_1_session_json_is_not_read_and_is_rewritten(tmp_path: Path) -> None:
    # A folder an earlier version wrote again after this one (it keeps marks in session.json only).
    task = copy_of_main_folder(tmp_path)
    (task / MARKS_FILE).write_text(json.dumps(meta(task)["marks"][:1]), encoding="utf-8")
    assert [m.turn for m in SessionStore(task).load().marks] == [1, 2, 3]
    engine = make_engine(SimulatedAPI([text_reply("fourth answer")]), tmp_path, resume=True)
    await run(engine, "fourth task")
    engine.session.close()
    assert logged_marks(task) == [1, 2, 3, 4] and [m.turn for m in Session.load(task).marks] == [1, 2, 3, 4]


async def test_a_process_killed_while_the_marks_move_loses_no_earlier_mark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = copy_of_main_folder(tmp_path)
    crashed = tmp_path / "crashed"
    real = SessionStore.save_meta

    def killed_here(self: SessionStore, *args: Any, **kwargs: Any) -> None:  # the folder as a SIGKILL would leave it
        if not crashed.exists():
            shutil.copytree(task, crashed, ignore=shutil.ignore_patterns("nbagent.lock"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "save_meta", killed_here)
    engine = make_engine(SimulatedAPI([text_reply("fourth answer")]), tmp_path, resume=True)
    await run(engine, "fourth task")
    engine.session.close()
    assert logged_marks(crashed) == [1, 2, 3, 4] and "marks" in meta(crashed)  # the log written, not yet session.json
    resumed = Session.load(crashed)  # session.json still holds the marks: they are the ones read
    assert [m.turn for m in resumed.marks] == [1, 2, 3] and resumed.turn == 4
    resumed.rollback(3)
    assert history_problems(resumed.history) == [] and len(resumed.records) == 7


def scripted() -> SimulatedAPI:
    return SimulatedAPI([tool_reply("echo", {"text": "a"}), text_reply("one"),
                         tool_reply("echo", {"text": "b"}), text_reply("two"), text_reply("three")])


async def test_a_turns_end_appends_its_mark_and_leaves_session_json_alone(tmp_path: Path) -> None:
    engine = make_engine(scripted(), tmp_path)
    task = tmp_path / "task"
    await run(engine, "first")
    meta_bytes, meta_inode = (task / SESSION_FILE).read_bytes(), (task / SESSION_FILE).stat().st_ino
    marks_inode = (task / MARKS_FILE).stat().st_ino
    await run(engine, "second")
    await run(engine, "third")
    assert (task / SESSION_FILE).stat().st_ino == meta_inode and (task / SESSION_FILE).read_bytes() == meta_bytes
    assert (task / MARKS_FILE).stat().st_ino == marks_inode and logged_marks(task) == [1, 2, 3]
    live = engine.session
    live.close()
    # What session.json no longer follows comes from the logs: the resumed session is the live one.
    loaded = Session.load(task)
    assert loaded.marks == live.marks and loaded.previous_usage == live.previous_usage
    assert loaded.last_ts == live.last_ts and loaded.totals == live.totals and loaded.spent == live.spent


async def test_a_new_model_is_saved_at_the_turns_end_and_resumed(tmp_path: Path) -> None:
    engine = make_engine(scripted(), tmp_path)
    await run(engine, "first")
    engine.reconfigure(model="claude-haiku-4-5")
    await run(engine, "second")
    engine.session.close()
    assert meta(tmp_path / "task")["model"] == "claude-haiku-4-5"
    assert Session.load(tmp_path / "task").model == "claude-haiku-4-5"


async def test_a_turns_mark_is_durable_when_its_run_ends_with_one_wait_for_the_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(scripted(), tmp_path)
    await run(engine, "first: creates the files")
    marks = os.stat(tmp_path / "task" / MARKS_FILE)
    synced = spy_syncs(monkeypatch)
    end_turn = engine.session.end_turn
    syncs_at_end_turn: list[int] = []

    def spied_end_turn(turn: int) -> None:
        end_turn(turn)
        syncs_at_end_turn.append(len(synced))

    monkeypatch.setattr(engine.session, "end_turn", spied_end_turn)
    now = time.monotonic()
    monkeypatch.setattr(store, "monotonic", lambda: now)  # requests that take no time: no sync due before the end
    await run(engine, "second")
    assert (marks.st_dev, marks.st_ino) in synced, "the mark's append was not synced by the run's end"
    # Every sync of the run is at its end, in one batch.
    assert syncs_at_end_turn == [0] and len(synced) == len(set(synced)), synced
    engine.session.close()
    assert [m.turn for m in Session.load(tmp_path / "task").marks] == [1, 2]


def spy_syncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The files (device, inode) that fsync or fdatasync is called on from now on."""
    synced: list[tuple[int, int]] = []

    def spying(real: Callable[[int], None]) -> Callable[[int], None]:
        def sync(fd: int) -> None:
            st = os.fstat(fd)
            synced.append((st.st_dev, st.st_ino))
            real(fd)
        return sync

    for name in ("fsync", "fdatasync"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, spying(getattr(os, name)))
    return synced
