"""Persistence proportional to change: a request appends what it added and syncs at most once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import nbagent.engine.disk.persist as persist
import nbagent.engine.state.store as store
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import (
    COMPACTIONS_FILE,
    CONTEXT_FILE,
    HISTORY_FILE,
    MARKS_FILE,
    REQUESTS_FILE,
    SENT_FILE,
    SESSION_FILE,
    UI_FILE,
)
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, run

TOOL_CALLS = 4


def four_calls_then_answer() -> SimulatedAPI:
    """Each prompt gets four ``add`` calls, then an answer (counted from the prompt on)."""

    def reply(body: dict[str, Any]) -> Any:
        calls = 0
        for m in reversed(body["messages"]):
            content = m["content"]
            if m["role"] == "user" and isinstance(content, list) and content[0].get("type") == "tool_result":
                calls += 1
            elif m["role"] == "user":
                break
        return tool_reply("add", {"a": calls, "b": 1}) if calls < TOOL_CALLS else text_reply("All added.")
    return SimulatedAPI(reply)


def counting(calls: list[int], real: Callable[[int], None]) -> Callable[[int], None]:
    """``real`` (a sync call) that first notes its file descriptor in ``calls``."""
    def sync(fd: int) -> None:
        calls.append(fd)
        real(fd)
    return sync


def count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """fsync and fdatasync calls (appends use the latter where it exists)."""
    calls: list[int] = []
    for name in ("fsync", "fdatasync"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, counting(calls, getattr(os, name)))
    return calls


async def test_a_request_calls_fsync_at_most_once_and_a_run_a_few_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "warm up: creates the files")
    fsyncs = count_fsyncs(monkeypatch)
    requests_before = len(engine.session.records)
    await run(engine, "add four times")
    requests = len(engine.session.records) - requests_before
    assert requests == TOOL_CALLS + 1
    # At most one per request (the history), then session.json, the request log and the event
    # log at the run's end (and the history again when tool results came after the last request).
    assert len(fsyncs) <= requests + 4, len(fsyncs)


class DiskLog:
    """What happens to each task-folder file, in order: ("append" | "sync", file name)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, task: Path) -> None:
        self.ops: list[tuple[str, str]] = []
        real_pwrite, real_sync = os.pwrite, getattr(os, "fdatasync", os.fsync)

        def pwrite(fd: int, data: bytes, offset: int) -> int:
            self.ops.append(("append", self._name(fd)))
            return real_pwrite(fd, data, offset)

        def sync(fd: int) -> None:
            self.ops.append(("sync", self._name(fd)))
            real_sync(fd)

        self._names = {(task / n).stat().st_ino: n for n in (HISTORY_FILE, REQUESTS_FILE) if (task / n).exists()}
        monkeypatch.setattr("nbagent.engine.disk.append_log.os.pwrite", pwrite)
        monkeypatch.setattr(os, "fdatasync" if hasattr(os, "fdatasync") else "fsync", sync)

    def _name(self, fd: int) -> str:
        return self._names.get(os.fstat(fd).st_ino, "other")

    def history_syncs(self) -> int:
        return self.ops.count(("sync", HISTORY_FILE))


class FakeClock:
    """The store's clock: each reading is ``step`` seconds after the previous one."""

    def __init__(self, step: float) -> None:
        self.now, self.step = time.monotonic(), step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


async def test_at_api_speed_every_request_syncs_the_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "warm up: creates the files")
    disk = DiskLog(monkeypatch, tmp_path / "task")
    monkeypatch.setattr(store, "monotonic", FakeClock(step=2 * store.HISTORY_SYNC_INTERVAL_S))
    await run(engine, "add four times")
    assert disk.history_syncs() >= TOOL_CALLS + 1, disk.ops  # one per request (and the run's end)


async def test_fast_requests_share_a_sync_and_the_run_ends_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "warm up: creates the files")
    disk = DiskLog(monkeypatch, tmp_path / "task")
    monkeypatch.setattr(store, "monotonic", FakeClock(step=0.0))  # requests that take no time
    await run(engine, "add four times")
    assert disk.history_syncs() == 1, disk.ops  # the run's end, not each of its five requests
    for name in (HISTORY_FILE, REQUESTS_FILE):
        last = [op for op, file in disk.ops if file == name][-1]
        assert last == "sync", f"{name} was appended to after its last sync: {disk.ops}"


async def test_history_and_records_are_appended_not_rewritten(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    task = tmp_path / "task"
    await run(engine, "first")
    logs = (HISTORY_FILE, REQUESTS_FILE)
    before = {name: (task / name).read_bytes() for name in logs}
    inodes = {name: (task / name).stat().st_ino for name in logs}  # an atomic rewrite makes a new file
    for i in range(3):
        await run(engine, f"prompt {i}")
    for name in logs:
        assert (task / name).stat().st_ino == inodes[name], f"{name} was rewritten"
        assert (task / name).read_bytes().startswith(before[name][:-2])
    engine.session.close()
    assert Session.load(task).history == engine.session.history


async def test_a_session_killed_mid_turn_resumes_with_the_newest_request_as_previous_usage(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "add four times")
    task = tmp_path / "task"
    # session.json as it was before the turn's requests: the request log knows more.
    records = engine.session.records
    engine.session.close()
    meta = json.loads((task / SESSION_FILE).read_text(encoding="utf-8"))
    meta["records_len"] = 1
    meta["marks"] = []
    (task / SESSION_FILE).write_text(json.dumps(meta), encoding="utf-8")
    resumed = Session.load(task)
    assert len(resumed.records) == len(records)
    assert resumed.previous_usage is not None and resumed.previous_usage.ts == records[-1].ts
    assert resumed.previous_usage.input_tokens == records[-1].usage.input_tokens
    assert resumed.last_ts >= records[-1].ts


async def test_a_rollback_rewrites_the_logs_to_what_remains(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "one")
    await run(engine, "two")
    engine.session.rollback(1)
    history, records = list(engine.session.history), len(engine.session.records)
    engine.session.close()
    again = Session.load(tmp_path / "task")
    assert again.history == history and len(again.records) == records


async def test_an_append_that_fails_half_way_is_repaired_by_the_next_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "one")
    real = os.pwrite

    def disk_full(fd: int, data: bytes, offset: int) -> int:  # half the append written, then ENOSPC
        real(fd, data[: len(data) // 2], offset)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("nbagent.engine.disk.append_log.os.pwrite", disk_full)
    events = await run(engine, "two")
    assert any("No space" in str(getattr(e, "error", "") or getattr(e, "message", "")) for e in events)
    monkeypatch.setattr("nbagent.engine.disk.append_log.os.pwrite", real)
    await run(engine, "three")
    history = list(engine.session.history)
    engine.session.close()
    again = Session.load(tmp_path / "task")
    assert again.history == history and not again.notices


async def test_what_undoes_a_compaction_is_written_once_not_every_turn(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    task = tmp_path / "task"
    for i in range(3):
        await run(engine, f"turn {i}")
    async for _ in engine.compact():
        pass
    assert len(engine.session.compactions) == 1
    log = task / COMPACTIONS_FILE
    written, inode = log.read_bytes(), log.stat().st_ino
    for i in range(2):
        await run(engine, f"after {i}")
    assert log.read_bytes() == written and log.stat().st_ino == inode
    assert "replaced" not in (task / SESSION_FILE).read_text(encoding="utf-8")


def _open_files_under(folder: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    out = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)):
            out.append(target)
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to list open files")
async def test_the_logs_stay_open_between_appends_and_close_with_the_session(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    await run(engine, "one")
    await run(engine, "two")
    held = _open_files_under(tmp_path / "task")
    assert any(p.endswith(HISTORY_FILE) for p in held)  # appended to, not reopened, per request
    engine.session.save(tmp_path / "copy")
    assert _open_files_under(tmp_path / "copy") == []  # a copy keeps nothing open
    engine.session.close()
    assert _open_files_under(tmp_path / "task") == []
    again = Session.load(tmp_path / "task")
    assert again.history == engine.session.history


def test_saving_into_its_own_folder_by_path_keeps_the_appends_that_follow(tmp_path: Path) -> None:
    """save(path) to the session's own folder rewrites its files (new inodes): the session's open
    logs must follow, or later appends would go to the unlinked files. (Found by a review.)"""
    session = Session(tmp_path, model="claude-sonnet-4-5")
    session.begin_turn([{"type": "text", "text": "one"}])
    session.history.append({"role": "assistant", "content": [{"type": "text", "text": "a1"}]})
    session._save_history()
    session.save(tmp_path)
    session.begin_turn([{"type": "text", "text": "two"}])
    session.close()
    assert len(Session.load(tmp_path).history) == 3


def _batches_written(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The names of each batch of files written atomically from now on (single files go through it too)."""
    made: list[list[str]] = []
    real = persist.atomic_write_files

    def batch(folder: Any, files: Any) -> None:
        made.append(list(files))
        real(folder, files)

    monkeypatch.setattr(store, "atomic_write_files", batch)
    monkeypatch.setattr(persist, "atomic_write_files", batch)
    return made


def test_a_new_sessions_files_are_made_at_once_and_appended_to_from_the_first_prompt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = tmp_path / "task"
    session = Session(task, model="claude-sonnet-4-5")
    made = _batches_written(monkeypatch)
    session.begin_turn([{"type": "text", "text": "one"}])
    # One write of every file (one wait for the disk); the prompt is then appended to the history.
    assert made == [[CONTEXT_FILE, REQUESTS_FILE, SENT_FILE, MARKS_FILE, SESSION_FILE, HISTORY_FILE, UI_FILE]]
    session.close_unanswered("no reply")
    session.end_turn(1)
    session.save_events()
    assert len(made) == 1, made  # the turn's end appended its mark and events
    session.close()
    loaded = Session.load(task)
    assert loaded.history == session.history and loaded.marks == session.marks and loaded.events == session.events


def test_a_context_change_writes_its_two_files_with_one_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(tmp_path / "task", model="claude-sonnet-4-5")
    session.begin_turn([{"type": "text", "text": "one"}])
    made = _batches_written(monkeypatch)
    session.context_changed((2, 3), truncated=True)
    assert made == [[CONTEXT_FILE, SESSION_FILE]]  # the updates first, as before, in one batch
    session.close()
    assert json.loads((tmp_path / "task" / SESSION_FILE).read_text(encoding="utf-8"))["deleted_range"] == [2, 3]
