"""A task folder deleted, replaced or crafted by someone else (issue 22): never silent loss, never a
hang, never a write outside the folder; every refusal names the file and what to do."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pydantic
import pytest

from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.contracts.events import Done, Notice
from nbagent.engine.contracts.messages import MessageParam
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import HISTORY_FILE, LOCK_FILE, REQUESTS_FILE, SESSION_FILE
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import Add, assert_history_valid, make_engine, run


class Vandal(Tool):
    """Does to the task folder what another program might, in the middle of a run."""

    name = "vandal"
    description = "Change files."
    read_only = True

    class Input(pydantic.BaseModel):
        pass

    def __init__(self, act: Callable[[], None]) -> None:
        self.act = act

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        self.act()
        return ToolOutput(content="done")


def vandal_run(tmp_path: Path, act: Callable[[], None]) -> Any:
    api = SimulatedAPI([text_reply("first"), tool_reply("vandal", {}), text_reply("second")])
    return make_engine(api, tmp_path, tools=[Vandal(act), Add()])


def notices(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice)]


def done(events: list[Any]) -> Done:
    return next(e for e in reversed(events) if isinstance(e, Done))


def reloaded(engine: Any) -> list[MessageParam]:
    task = engine.session.task_dir
    engine.session.close()
    return Session.load(task).history


# ----- deleted or replaced ----------------------------------------------------------------------

async def test_a_folder_deleted_mid_run_is_written_again_whole_and_the_user_told(tmp_path: Path) -> None:
    task = tmp_path / "task"
    engine = vandal_run(tmp_path, lambda: shutil.rmtree(task))
    await run(engine, "one")
    events = await run(engine, "two: the tool deletes the folder")
    assert done(events).reason == "end_turn"
    assert any("task folder was deleted" in n and "written again whole" in n for n in notices(events))
    assert len(engine.session.history) == 6
    assert reloaded(engine) == engine.session.history  # not 0 of 6


async def test_every_file_deleted_mid_run_lock_included_is_written_again_whole(tmp_path: Path) -> None:
    task = tmp_path / "task"

    def empty() -> None:
        for p in task.iterdir():
            p.unlink()

    engine = vandal_run(tmp_path, empty)
    await run(engine, "one")
    events = await run(engine, "two: the tool empties the folder")
    assert any("its lock file was deleted" in n for n in notices(events))
    assert (task / LOCK_FILE).read_text() == str(os.getpid())  # locked again
    assert reloaded(engine) == engine.session.history and len(engine.session.history) == 6


async def test_a_folder_deleted_between_runs_is_written_again_whole_and_the_user_told(tmp_path: Path) -> None:
    task = tmp_path / "task"
    engine = vandal_run(tmp_path, lambda: None)
    await run(engine, "one")
    shutil.rmtree(task)
    events = await run(engine, "two")
    assert any("task folder was deleted" in n for n in notices(events))
    assert reloaded(engine) == engine.session.history and len(engine.session.history) == 6


async def test_a_log_replaced_mid_run_is_written_again_and_the_warning_is_true(tmp_path: Path) -> None:
    task = tmp_path / "task"

    def replace_history() -> None:  # a copy put in its place: the session's open file is unlinked
        shutil.copy(task / HISTORY_FILE, tmp_path / "copy.json")
        os.replace(tmp_path / "copy.json", task / HISTORY_FILE)

    engine = vandal_run(tmp_path, replace_history)
    await run(engine, "one")
    events = await run(engine, "two")
    assert any("was replaced by another program" in n and "saved again since" in n for n in notices(events))
    assert reloaded(engine) == engine.session.history and len(engine.session.history) == 6


async def test_a_folder_replaced_by_another_is_left_alone_with_a_clear_error(tmp_path: Path) -> None:
    task = tmp_path / "task"
    engine = vandal_run(tmp_path, lambda: None)
    await run(engine, "one")
    os.rename(task, tmp_path / "moved")
    task.mkdir()
    (task / "theirs.txt").write_text("someone else's")
    events = await run(engine, "two")
    assert done(events).reason == "error"
    assert "replaced by another folder" in (done(events).error or "")
    assert sorted(p.name for p in task.iterdir()) == ["theirs.txt"]  # nothing written over it
    assert_history_valid(engine.session.history)
    assert len(engine.session.history) == 6  # kept in memory: agent.save(elsewhere) keeps it
    engine.session.save(tmp_path / "kept")
    assert Session.load(tmp_path / "kept").history == engine.session.history


# ----- crafted files: regular files only, capped, finite costs -----------------------------------

def saved_session(tmp_path: Path) -> Path:
    """A closed task folder with two requests recorded."""
    engine = make_engine(SimulatedAPI([tool_reply("add", {"a": 1, "b": 2}), text_reply("3")]), tmp_path)
    asyncio.run(run(engine, "add"))
    engine.session.close()
    return tmp_path / "task"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", [SESSION_FILE, HISTORY_FILE])
def test_a_fifo_in_the_folder_is_refused_not_waited_on(tmp_path: Path, name: str) -> None:
    task = saved_session(tmp_path)
    (task / name).unlink()
    os.mkfifo(task / name)
    with pytest.raises(CorruptFileError, match=f"{name}.*a FIFO, not a regular file"):
        Session.load(task)


@pytest.mark.parametrize("target", ["outside.json", "/dev/zero"])
def test_a_symlinked_history_is_refused_never_followed(tmp_path: Path, target: str) -> None:
    task = saved_session(tmp_path)
    outside = tmp_path / target if not target.startswith("/") else Path(target)
    if not outside.is_absolute() or not outside.exists():
        outside.write_bytes((task / HISTORY_FILE).read_bytes())  # a valid history, outside the folder
    (task / HISTORY_FILE).unlink()
    (task / HISTORY_FILE).symlink_to(outside)
    with pytest.raises(CorruptFileError, match=f"{HISTORY_FILE}.*a symbolic link, not a regular file"):
        Session.load(task)


def test_a_task_file_over_the_cap_is_refused_naming_it_and_the_cap(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from nbagent.engine.disk import safe_open

    task = saved_session(tmp_path)
    size = (task / HISTORY_FILE).stat().st_size
    monkeypatch.setattr(safe_open, "MAX_TASK_FILE_BYTES", size - 1)
    with pytest.raises(CorruptFileError, match=f"{HISTORY_FILE}.*larger than the {size - 1:,} bytes"):
        Session.load(task)


def edit_records(task: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    records = json.loads((task / REQUESTS_FILE).read_text())
    change(records)
    (task / REQUESTS_FILE).write_text(json.dumps(records))  # NaN and Infinity as Python writes them


@pytest.mark.parametrize("field,value", [("cost_usd", float("nan")), ("cost_usd", float("inf")),
                                         ("cost_usd", -0.5), ("input_tokens", -100),
                                         ("cost_usd", 1e18)])  # later requests' costs vanish into it
def test_money_or_tokens_that_would_switch_a_budget_off_are_refused(tmp_path: Path, field: str, value: Any) -> None:
    task = saved_session(tmp_path)

    def poison(records: list[dict[str, Any]]) -> None:
        (records[0] if field == "cost_usd" else records[0]["usage"])[field] = value

    edit_records(task, poison)
    with pytest.raises(CorruptFileError, match=f"{REQUESTS_FILE}.*{field}"):
        Session.load(task)


@pytest.mark.parametrize("name,key", [(SESSION_FILE, "last_ts"), (REQUESTS_FILE, "ts")])
def test_a_5000_digit_integer_is_a_corrupt_file_naming_it(tmp_path: Path, name: str, key: str) -> None:
    task = saved_session(tmp_path)
    data = json.loads((task / name).read_text())
    (data if name == SESSION_FILE else data[0])[key] = 0
    text = json.dumps(data).replace(f'"{key}": 0', f'"{key}": ' + "9" * 5000, 1)
    assert "9" * 5000 in text
    (task / name).write_text(text)
    with pytest.raises(CorruptFileError, match=f"{name} is corrupt.*digits"):
        Session.load(task)


def test_a_log_symlinked_out_of_the_folder_is_never_appended_to(tmp_path: Path) -> None:
    task = tmp_path / "task"
    session = Session(task, model="claude-sonnet-4-5")
    session.begin_turn([{"type": "text", "text": "one"}])
    session.close()
    session = Session.load(task)
    outside = tmp_path / "outside.json"
    outside.write_bytes((task / HISTORY_FILE).read_bytes())
    (task / HISTORY_FILE).unlink()
    (task / HISTORY_FILE).symlink_to(outside)
    before = outside.read_bytes()
    session.history.append({"role": "assistant", "content": [{"type": "text", "text": "a1"}]})
    session._save_history()  # the append is refused: not a regular file
    assert any("symbolic link" in f for f in session.save_failures)
    session.begin_turn([{"type": "text", "text": "two"}])  # the next write replaces the link by the file
    session.close()
    assert outside.read_bytes() == before
    assert not (task / HISTORY_FILE).is_symlink()
    assert len(Session.load(task).history) == 3
