"""One writer per task folder (issue 22): the lock is an flock held for the session's life, taken
atomically by real processes racing for it; close() never leaves a run writing without it; a save
never replaces a folder someone else holds or another saved session."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from nbagent.agent import Agent
from nbagent.engine.contracts.errors import NbAgentError
from nbagent.engine.contracts.events import Done
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import HISTORY_FILE, LOCK_FILE, FolderLock, TaskFolderLockedError
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import Slow
from tests.soak import sample_by_default

ROOT = Path(__file__).resolve().parents[3]

# Waits for "go" on stdin, tries to lock, says whether it became the writer, holds until stdin closes.
CONTENDER = textwrap.dedent("""
    import sys
    from nbagent.engine.state.store import FolderLock
    lock = FolderLock(sys.argv[1])
    sys.stdin.readline()
    try:
        lock.acquire()
        print("writer", flush=True)
    except Exception as exc:
        print("refused", type(exc).__name__, flush=True)
    sys.stdin.read()
""")


@pytest.mark.parametrize("trials", sample_by_default(5, 20))
def test_two_processes_taking_over_a_stale_lock_make_exactly_one_writer_in_every_trial(tmp_path: Path, trials: int) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    for trial in range(trials):
        task = tmp_path / f"t{trial}"
        task.mkdir()
        (task / LOCK_FILE).write_text(dead)  # left by a process that is gone
        procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(task)], cwd=ROOT, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(2)]
        try:
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            answers = [p.stdout.readline().split()[0] for p in procs if p.stdout is not None]
        finally:
            for p in procs:
                # stdin closed (the contender ends), stdout read to its end and closed: left to the garbage
                # collector, the pipes warned in whichever later test a collection ran (test_class_pacing).
                p.communicate()
        assert sorted(answers) == ["refused", "writer"], (trial, answers)


def test_a_folder_another_process_writes_says_to_close_the_session_there_not_here(tmp_path: Path) -> None:
    """The same notebook open under two Jupyter servers: the second kernel's agent cell failed with "in use
    by process N … close that session first (agent.close() / %agent reset)", where a reset in that kernel
    only starts a new conversation (newcomer pass 20)."""
    holder = subprocess.Popen([sys.executable, "-c", CONTENDER, str(tmp_path / "task")], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().split()[0] == "writer"
        with pytest.raises(TaskFolderLockedError) as refused:
            FolderLock(tmp_path / "task").acquire()
    finally:
        holder.communicate()
    message = str(refused.value)
    assert f"in use by process {holder.pid}" in message and "shut that kernel down" in message
    assert "in it" in message and "another Jupyter server" in message


def test_a_lock_file_naming_a_huge_or_a_live_unrelated_pid_locks_nothing(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / LOCK_FILE).write_text("99999999999999999999")
    first = Session(task)
    assert any("unreadable lock file" in n for n in first.notices)
    first.close()
    (task / LOCK_FILE).write_text(str(os.getppid()))  # alive, but it holds no lock here
    second = Session(task)
    assert any(f"process {os.getppid()}" in n for n in second.notices)
    second.close()


def test_no_space_at_agent_creation_is_an_error_naming_the_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(os, "mkdir", full)
    task = tmp_path / "new" / "task"
    with pytest.raises(NbAgentError, match=f"cannot write the task folder {task}.*Free space") as caught:
        Agent(provider="simulated", cwd=tmp_path, task_dir=task)
    assert isinstance(caught.value, OSError) and caught.value.errno == errno.ENOSPC


async def test_close_during_a_run_keeps_the_lock_until_the_run_has_saved_its_end(tmp_path: Path) -> None:
    task, slow = tmp_path / "task", Slow()
    api = SimulatedAPI([tool_reply("slow", {"seconds": 600}), text_reply("never")])
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, tools=[slow], task_dir=task)

    async def collect() -> list[Any]:
        return [e async for e in agent.run("go")]

    running = asyncio.ensure_future(collect())
    await slow.started.wait()
    agent.close()  # aborts the run; the folder stays locked until the run has written its end
    with pytest.raises(TaskFolderLockedError):
        Session.load(task)
    events = await running
    assert isinstance(events[-1], Done) and events[-1].reason == "aborted"
    assert not (task / LOCK_FILE).exists()
    again = Session.load(task)  # not corrupt: nothing was written after the lock was gone
    assert again.history == agent.history and history_problems(again.history) == []
    again.close()


def test_save_into_a_folder_another_live_agent_holds_is_refused(tmp_path: Path) -> None:
    holder = Session(tmp_path / "held", model="claude-sonnet-4-5")
    holder.begin_turn([{"type": "text", "text": "theirs"}])
    before = (tmp_path / "held" / HISTORY_FILE).read_bytes()
    mine = Session(model="claude-sonnet-4-5")
    mine.begin_turn([{"type": "text", "text": "mine"}])
    with pytest.raises(TaskFolderLockedError, match="in use by another Agent in this process"):
        mine.save(tmp_path / "held")
    assert (tmp_path / "held" / HISTORY_FILE).read_bytes() == before
    holder.close()


def test_save_onto_another_saved_session_is_refused_but_a_new_folder_and_its_own_are_not(tmp_path: Path) -> None:
    other = Session(tmp_path / "other", model="claude-sonnet-4-5")
    other.begin_turn([{"type": "text", "text": "theirs"}])
    other.close()
    before = (tmp_path / "other" / HISTORY_FILE).read_bytes()
    mine = Session(tmp_path / "mine", model="claude-sonnet-4-5")
    mine.begin_turn([{"type": "text", "text": "mine"}])
    with pytest.raises(NbAgentError, match="already holds a saved session"):
        mine.save(tmp_path / "other")
    assert (tmp_path / "other" / HISTORY_FILE).read_bytes() == before
    assert not (tmp_path / "other" / LOCK_FILE).exists()
    assert mine.save(tmp_path / "copy") == tmp_path / "copy"
    assert mine.save(tmp_path / "mine") == tmp_path / "mine"  # its own folder, by path
    mine.close()
    assert Session.load(tmp_path / "copy").history == Session.load(tmp_path / "mine").history


def test_a_closed_session_writes_nothing_more(tmp_path: Path) -> None:
    session = Session(tmp_path / "task", model="claude-sonnet-4-5")
    session.begin_turn([{"type": "text", "text": "one"}])
    session.close()
    other = Session.load(tmp_path / "task")  # the next writer
    session.history.append({"role": "assistant", "content": [{"type": "text", "text": "late"}]})
    session._save_history()
    assert any("was closed" in f for f in session.save_failures)
    other.close()
    loaded = Session.load(tmp_path / "task")
    assert len(loaded.history) == 1
    loaded.close()
