"""Compaction's rollback point is in the task folder: a resumed session rolls back across a
compaction (or two) to exactly the history, range and context updates it had before."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from nbagent import Agent
from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.compaction import COMPACT_KEEP
from nbagent.engine.state.compactions import SUMMARY_MARK
from nbagent.engine.state.store import COMPACTIONS_FILE, HISTORY_FILE, SESSION_FILE
from nbagent.providers.simulated import SimulatedAPI


def open_agent(task: Path, tmp_path: Path, resume: bool = False, **settings: Any) -> Agent:
    options: dict[str, Any] = dict(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path,
                                   allow=["python"], **settings)
    return Agent.resume(task, **options) if resume else Agent(task_dir=task, **options)


def chat(agent: Agent, first: int, n: int, padding: int = 0) -> None:
    for i in range(first, first + n):
        agent.run_sync(f"What is {i + 2} * 3? Topic {i}. " + "word " * padding)


def state(agent: Agent) -> dict[str, Any]:
    s = agent.session
    return {"history": copy.deepcopy(s.history), "range": s.deleted_range, "records": len(s.records),
            "updates": s.context.updates.to_json()}


def test_resume_then_rollback_across_a_compaction_restores_exactly(tmp_path: Path) -> None:
    task = tmp_path / "task"
    agent = open_agent(task, tmp_path)
    chat(agent, 0, 3)
    before, turn = state(agent), agent.turn
    agent.compact_sync()
    chat(agent, 3, 1)
    assert SUMMARY_MARK in json.dumps(agent.history[2])
    points = json.loads((task / COMPACTIONS_FILE).read_text())
    assert [c["turns"] for c in points] == [[1, 2, 3]]
    assert "compactions" not in json.loads((task / SESSION_FILE).read_text())  # not rewritten every turn
    agent.close()

    resumed = open_agent(task, tmp_path, resume=True)
    resumed.rollback(turn)
    assert state(resumed) == before
    assert json.loads((task / HISTORY_FILE).read_text()) == before["history"]
    assert json.loads((task / COMPACTIONS_FILE).read_text()) == []  # the point is used up
    resumed.close()
    again = open_agent(task, tmp_path, resume=True)  # and the folder holds the rolled-back session
    assert state(again) == before and history_problems(again.history) == []
    again.close()


def test_two_compactions_with_truncation_updates_are_undone_after_resume(tmp_path: Path) -> None:
    task = tmp_path / "task"
    agent = open_agent(task, tmp_path, context_window=6_000)
    chat(agent, 0, 4, padding=1_200)  # the window truncates: the context manager has updates
    before, turn = state(agent), agent.turn
    assert before["updates"], "the small window must have truncated before the compaction"
    agent.compact_sync()
    chat(agent, 4, 3, padding=100)
    middle, middle_turn = state(agent), agent.turn
    agent.compact_sync()
    chat(agent, 7, 1)
    assert [r.keep for r in agent.records].count(COMPACT_KEEP) == 2
    agent.close()

    resumed = open_agent(task, tmp_path, resume=True, context_window=6_000)
    assert len(resumed.session.compactions) == 2
    resumed.rollback(middle_turn)  # between the two: only the second is undone
    assert state(resumed) == middle and len(resumed.session.compactions) == 1
    resumed.rollback(turn)
    assert state(resumed) == before and resumed.session.compactions == []
    resumed.close()


def test_a_rollback_to_a_turn_after_the_compaction_keeps_it(tmp_path: Path) -> None:
    task = tmp_path / "task"
    agent = open_agent(task, tmp_path)
    chat(agent, 0, 3)
    agent.compact_sync()
    chat(agent, 3, 1)
    after, turn = state(agent), agent.turn
    chat(agent, 4, 1)
    agent.close()
    resumed = open_agent(task, tmp_path, resume=True)
    resumed.rollback(turn)
    assert state(resumed) == after and len(resumed.session.compactions) == 1
    resumed.close()


def test_a_corrupt_compaction_entry_names_its_file(tmp_path: Path) -> None:
    task = tmp_path / "task"
    agent = open_agent(task, tmp_path)
    chat(agent, 0, 3)
    agent.compact_sync()
    agent.close()
    points = json.loads((task / COMPACTIONS_FILE).read_text())
    points[0]["replaced"] = "oops"
    (task / COMPACTIONS_FILE).write_text(json.dumps(points))
    with pytest.raises(CorruptFileError, match="compactions.json.*replaced messages"):
        open_agent(task, tmp_path, resume=True)
    assert not (task / "nbagent.lock").exists()  # nothing on disk changed
