"""A process killed before any one of its writes (or half way through an append) leaves a folder
that resumes to a valid conversation, and every turn mark in it rolls back to a valid one.

The scenario — tool calls, a compaction, a turn after it, a rollback across it, a turn after
that — is run once per write it makes; run k dies at write k (nothing written after it, as for a
killed process). Complements ``test_session_kill.py`` (real SIGKILLs at random moments)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

import nbagent.engine.disk.append_log as append_log
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.state.session import Session
from tests.engine.loop.test_query_support import make_engine, run
from tests.engine.state.test_session_writes import four_calls_then_answer
from tests.soak import sample_by_default


class Killed(BaseException):
    """The process died (a BaseException: nothing in the engine catches it)."""


class Writes:
    """Counts the folder's writes; from write ``kill_at`` on, the process is dead. A write is an
    append, or the rename that ends an atomic write (several in a row when a write replaces
    several files at once: a kill may fall between any two)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kill_at: int | None, torn: bool) -> None:
        self.count, self.kill_at, self.torn = 0, kill_at, torn
        real_replace, real_append = os.replace, append_log.AppendLog._append

        def replace(src: Any, dst: Any) -> None:
            self._before_write()
            real_replace(src, dst)

        def append(log: append_log.AppendLog, lines: list[str]) -> None:
            if self._before_write(raise_now=not self.torn):
                with open(log.path, "r+b") as f:  # half the append reaches the disk
                    empty = f.read() == b"[]"  # the first item goes after "[", as AppendLog writes it
                    payload = (("\n" if empty else ",\n") + ",\n".join(lines) + "\n]").encode("utf-8")
                    f.seek(1 if empty else -2, 0 if empty else 2)
                    f.write(payload[: len(payload) // 2])
                    f.truncate()
                raise Killed
            real_append(log, lines)

        monkeypatch.setattr(os, "replace", replace)
        monkeypatch.setattr(append_log.AppendLog, "_append", append)

    def _before_write(self, raise_now: bool = True) -> bool:
        self.count += 1
        if self.kill_at is None or self.count < self.kill_at:
            return False
        if self.count == self.kill_at and not raise_now:
            return True
        raise Killed


async def scenario(tmp_path: Path) -> None:
    engine = make_engine(four_calls_then_answer(), tmp_path)
    try:
        for i in range(3):
            await run(engine, f"turn {i}")
        async for _ in engine.compact():
            pass
        await run(engine, "after the compaction")
        engine.session.rollback(2)  # across the compaction
        await run(engine, "after the rollback")
    finally:
        engine.session._lock.release()  # type: ignore[union-attr]  # a dead process holds no lock


def check_folder(task: Path) -> None:
    session = Session.load(task)
    try:
        assert not session.history or history_problems(session.history) == []
        for mark in list(session.marks):
            trial = copy.copy(session)
            trial.history, trial.records, trial.marks = list(session.history), list(session.records), list(session.marks)
            trial.compactions = list(session.compactions)
            trial._store = None  # roll back in memory only
            trial.rollback(mark.turn)
            assert history_problems(trial.history) == [], f"rollback to turn {mark.turn}"
    finally:
        session.close()


@pytest.mark.parametrize("torn", [False, True], ids=["killed before a write", "killed half way through an append"])
@pytest.mark.parametrize("every", sample_by_default(3, 1), ids=["every third write", "every write"])
async def test_killed_at_any_write_the_folder_resumes_and_rolls_back_validly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torn: bool, every: int) -> None:
    with monkeypatch.context() as m:
        total = Writes(m, None, torn)
        await scenario(tmp_path / "count")
    assert total.count > 40
    failures = []
    for k in range(1, total.count + 1, every):  # the soak run kills at every write
        folder = tmp_path / f"kill-{k}"
        with monkeypatch.context() as m:
            Writes(m, k, torn)
            with pytest.raises(Killed):
                await scenario(folder)
        try:
            check_folder(folder / "task")
        except Exception as exc:  # noqa: BLE001 - collect every failing kill point
            failures.append(f"write {k}: {type(exc).__name__}: {exc}")
    assert failures == [], "\n".join(failures)
